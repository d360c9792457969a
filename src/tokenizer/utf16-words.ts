/**
 * A string's UTF-16 code units read as 32-bit words, two units per word, from one reusable
 * scratch buffer. Copying an 800 KB prompt into the buffer costs tens of microseconds (a native
 * copy), after which a JS loop reads two characters per typed-array load instead of calling
 * `charCodeAt` per character. Relies on a little-endian host (x86, arm64): word `k` holds unit
 * `2k` in its low 16 bits and unit `2k+1` in its high 16 bits. A text may come in pieces, some of
 * them ASCII bytes (`TextPiece`), widened to code units natively as they are written.
 */
import type { TextPiece } from "../api/prompt.ts";

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

/** Code units of a text given as one string or as pieces to read in order. */
export function textLength(text: string | readonly TextPiece[]): number {
  if (typeof text === "string") return text.length;
  let length = 0;
  for (const piece of text) length += piece.length;
  return length;
}

/**
 * The first `units` UTF-16 code units of `text` (0 ≤ `units` ≤ its length), one string or the
 * concatenation of pieces (each written in place, so a concatenation is never materialised), as
 * `ceil(units / 2)` words; an odd trailing unit has 0 in the high half. The view aliases a shared
 * scratch buffer: it is valid only until the next call, so read it before calling again.
 */
export function utf16Words(text: string | readonly TextPiece[], units: number): Uint32Array {
  const wordCount = (units + 1) >>> 1;
  ensureScratch(wordCount * 4);
  if (typeof text === "string") scratchBytes.write(text, 0, units * 2, "utf16le");
  else writePieces(text, units);
  if (units & 1) scratchBytes.writeUInt16LE(0, units * 2);
  return new Uint32Array(scratch, 0, wordCount);
}

function writePieces(pieces: readonly TextPiece[], units: number): void {
  let at = 0;
  for (let i = 0; i < pieces.length && at < units; i++) {
    const piece = pieces[i]!;
    const count = Math.min(piece.length, units - at);
    if (typeof piece === "string") scratchBytes.write(piece, at * 2, count * 2, "utf16le");
    else new Uint16Array(scratch, at * 2, count).set(piece.subarray(0, count));
    at += count;
  }
}
