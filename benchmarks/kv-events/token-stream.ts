/** Pseudo-random token ids for the KV-event benchmarks: deterministic per seed, below a Llama vocabulary. */
export function tokenStream(seed: number, n: number): Uint32Array {
  const out = new Uint32Array(n);
  let x = seed * 2654435761 + 1;
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    out[i] = x % 128_000;
  }
  return out;
}
