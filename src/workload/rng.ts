/**
 * Seeded randomness for workloads: every draw comes from an explicit `Rng`, so a scenario with
 * the same seed replays the same arrivals, lengths and session picks.
 */

/** 32-bit FNV-1a of a string's UTF-16 code units (unsigned). */
export function fnv1a32(text: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/**
 * Memoised {@link fnv1a32} of segment namespaces. Consecutive segments almost always share a
 * namespace, so the last one answers without a map lookup; the map is cleared past 100,000
 * entries so session-scoped namespaces cannot grow it without bound.
 */
export class NamespaceHashes {
  private readonly hashes = new Map<string, number>();
  private lastNs = "";
  private lastHash = fnv1a32("");

  /** `fnv1a32(ns)`. */
  of(ns: string): number {
    if (ns === this.lastNs) return this.lastHash;
    let h = this.hashes.get(ns);
    if (h === undefined) {
      h = fnv1a32(ns);
      if (this.hashes.size > 100_000) this.hashes.clear();
      this.hashes.set(ns, h);
    }
    this.lastNs = ns;
    this.lastHash = h;
    return h;
  }
}

/** Mixes an integer into a 32-bit hash (murmur3 finaliser); used to chain block identities. */
export function mix32(h: number, value: number): number {
  let x = (h ^ Math.imul(value | 0, 0x9e3779b1) ^ ((value / 0x100000000) | 0)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Small fast PRNG (sfc32) with the distributions workloads need. State is 128 bits. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** Seeds from a number or a string key (hashed), so sub-streams can be derived by name. */
  constructor(seed: number | string) {
    const s = typeof seed === "string" ? fnv1a32(seed) : seed >>> 0;
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = s;
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** Uniform unsigned 32-bit integer. */
  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 0x100000000;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Exponential with the given mean (> 0). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** Standard normal (Box–Muller, one value per call). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /** Log-normal with the given median and log-space sigma. */
  lognormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** An element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}
