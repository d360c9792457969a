/** Deterministic synthetic token ids for tests and benchmarks (no tokenizer needed). */

/** `length` token ids drawn from a seeded LCG; equal seeds give equal arrays. */
export function syntheticTokens(length: number, seed: number): Uint32Array {
  const out = new Uint32Array(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x % 128000;
  }
  return out;
}

/** `a` followed by `b`. */
export function concatTokens(a: Uint32Array, b: Uint32Array): Uint32Array {
  const out = new Uint32Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
