/**
 * A string's UTF-16 code units read as 32-bit words, two units per word, from one reusable
 * scratch buffer. Copying an 800 KB prompt into the buffer costs tens of microseconds (a native
 * copy), after which a JS loop reads two characters per typed-array load instead of calling
 * `charCodeAt` per character. Relies on a little-endian host (x86, arm64): word `k` holds unit
 * `2k` in its low 16 bits and unit `2k+1` in its high 16 bits.
 */

const MIN_SCRATCH_BYTES = 64 * 1024;

let scratch = new ArrayBuffer(0);
let scratchBytes = Buffer.from(scratch);

function ensureScratch(byteLength: number): void {
  if (scratch.byteLength >= byteLength) return;
  let size = Math.max(MIN_SCRATCH_BYTES, scratch.byteLength);
  while (size < byteLength) size *= 2;
  scratch = new ArrayBuffer(size);
  scratchBytes = Buffer.from(scratch);
}

/**
 * The first `units` UTF-16 code units of `text` (0 ≤ `units` ≤ `text.length`) as
 * `ceil(units / 2)` words; an odd trailing unit has 0 in the high half. The view aliases a shared
 * scratch buffer: it is valid only until the next call, so read it before calling again.
 */
export function utf16Words(text: string, units: number): Uint32Array {
  const wordCount = (units + 1) >>> 1;
  ensureScratch(wordCount * 4);
  scratchBytes.write(text, 0, units * 2, "utf16le");
  if (units & 1) scratchBytes.writeUInt16LE(0, units * 2);
  return new Uint32Array(scratch, 0, wordCount);
}
