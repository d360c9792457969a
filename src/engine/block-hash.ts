/**
 * Chained prefix-block hashes over token ids, as plain numbers so the hot path never touches bigint.
 * Each hash is a 53-bit non-negative integer (safe in a double) computed from two 32-bit lanes seeded by
 * the parent hash; the root parent mixes the LoRA name and cache salt, so requests that differ in either
 * share nothing. KV events convert to bigint at the boundary (`BigInt(hash)`, a uint64 < 2^53).
 */

const TWO_32 = 4294967296;
const HIGH_MASK = 0x1fffff;

/** 53-bit hash of [parent, tokens[from, from+count)]. */
export function hashBlock(parent: number, tokens: Uint32Array, from: number, count: number): number {
  let h1 = (parent >>> 0) ^ 0xdeadbeef;
  let h2 = Math.floor(parent / TWO_32) ^ 0x41c6ce57;
  for (let i = from, end = from + count; i < end; i++) {
    const t = tokens[i]!;
    h1 = Math.imul(h1 ^ t, 2654435761);
    h2 = Math.imul(h2 ^ t, 1597334677);
  }
  return finish(h1, h2);
}

/** 53-bit hash of a string (used to seed chains), 0-length strings included. */
export function hashString(s: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  return finish(h1, h2);
}

/** Root parent hash of a chain: mixes LoRA adapter and cache salt (both optional). */
export function chainSeed(lora: string | undefined, cacheSalt: string | undefined): number {
  return hashString(cacheSalt ?? "", hashString(lora ?? "") >>> 0);
}

/**
 * Hashes of every whole block of `tokens` (a trailing partial block has none), chained from `seed`.
 * Length = floor(tokens.length / blockSize).
 */
export function blockHashes(tokens: Uint32Array, blockSize: number, seed: number): Float64Array {
  const n = Math.floor(tokens.length / blockSize);
  const out = new Float64Array(n);
  let parent = seed;
  for (let b = 0; b < n; b++) {
    parent = hashBlock(parent, tokens, b * blockSize, blockSize);
    out[b] = parent;
  }
  return out;
}

function finish(a: number, b: number): number {
  let h1 = Math.imul(a ^ (a >>> 16), 2246822507);
  h1 ^= Math.imul(b ^ (b >>> 13), 3266489909);
  let h2 = Math.imul(b ^ (b >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 & HIGH_MASK) * TWO_32 + (h1 >>> 0);
}
