/**
 * Request keys of the precise prefix index, in llm-d's `cbor-fnv` scheme (reference §4.2): the
 * tokens are cut into full blocks of `blockSizeTokens` (a trailing partial block has no key), and
 * block i's key is FNV-64a over the canonical CBOR of `[parent key, block tokens, null]`, chained
 * from a root of `[FNV-64a(hashSeed), null, model name]`. The router computes them from its own
 * tokens, and the index recomputes them from the token ids a `BlockStored` event carries, so the
 * engine's own hashes (seed, algorithm, block size) never have to agree with the router's.
 *
 * Keys are 64-bit; the chain carries all 64 bits (as two 32-bit halves), and the index stores the
 * low 53 bits as a JS number (`foldKey`).
 */

const TWO_POW_32 = 4294967296;
const LOW_21_BITS = 0x1fffff;
const FNV_OFFSET_HI = 0xcbf29ce4;
const FNV_OFFSET_LO = 0x84222325;
const FNV_PRIME_LO = 0x1b3; // the prime is 2^40 + 0x1b3
const CBOR_NULL = 0xf6;
const CBOR_ARRAY_OF_3 = 0x83;

/** A 64-bit key as two unsigned 32-bit halves. */
export interface Key64 {
  hi: number;
  lo: number;
}

/** The index's form of a 64-bit key: its low 53 bits, exact in a JS number. */
export function foldKey(hi: number, lo: number): number {
  return (hi & LOW_21_BITS) * TWO_POW_32 + (lo >>> 0);
}

/**
 * Canonical CBOR into a growable byte buffer. Hashing then runs over the buffer in one tight loop
 * (`fnv64a`), which keeps the 64-bit state in local int32 variables.
 */
class CborWriter {
  bytes = new Uint8Array(1024);
  length = 0;

  reset(): void {
    this.length = 0;
  }

  byte(b: number): void {
    if (this.length === this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes[this.length++] = b;
  }

  /** A head: major type and argument, in the shortest form (canonical CBOR). */
  head(major: number, value: number): void {
    const m = major << 5;
    if (value < 24) this.byte(m | value);
    else if (value < 0x100) {
      this.byte(m | 24);
      this.byte(value);
    } else if (value < 0x10000) {
      this.byte(m | 25);
      this.byte(value >>> 8);
      this.byte(value & 0xff);
    } else {
      this.byte(m | 26);
      this.word(value);
    }
  }

  /** An unsigned 64-bit integer. */
  uint64(hi: number, lo: number): void {
    if (hi === 0) {
      this.head(0, lo);
      return;
    }
    this.byte(27);
    this.word(hi);
    this.word(lo);
  }

  word(v: number): void {
    this.byte(v >>> 24);
    this.byte((v >>> 16) & 0xff);
    this.byte((v >>> 8) & 0xff);
    this.byte(v & 0xff);
  }
}

/**
 * FNV-64a of `bytes[0, length)` into `out`. The prime is 2^40 + 0x1b3, so h·prime is
 * h·0x1b3 + (lo << 40): the low word's product is taken in 16-bit halves to stay exact in int32.
 */
function fnv64a(bytes: Uint8Array, length: number, out: Key64): Key64 {
  let hi = FNV_OFFSET_HI;
  let lo = FNV_OFFSET_LO;
  for (let i = 0; i < length; i++) {
    const x = (lo ^ bytes[i]!) >>> 0;
    const a = (x & 0xffff) * FNV_PRIME_LO;
    const b = (x >>> 16) * FNV_PRIME_LO + (a >>> 16);
    hi = (Math.imul(hi, FNV_PRIME_LO) + (b >>> 16) + (x << 8)) >>> 0;
    lo = ((b << 16) | (a & 0xffff)) >>> 0;
  }
  out.hi = hi;
  out.lo = lo;
  return out;
}

/** Computes request keys for one `(blockSizeTokens, hashSeed)` configuration; roots cached per model. */
export class RequestKeyHasher {
  private readonly cbor = new CborWriter();
  private readonly seed: Key64;
  private readonly roots = new Map<string, Key64>();

  constructor(
    /** Tokens per request block (≥ 1). */
    readonly blockSizeTokens: number,
    hashSeed = "",
  ) {
    const utf8 = new TextEncoder().encode(hashSeed);
    this.seed = fnv64a(utf8, utf8.length, { hi: 0, lo: 0 });
  }

  /** The chain's root for `model` (a LoRA adapter's name stands in for the model when set). */
  root(model: string): Key64 {
    let root = this.roots.get(model);
    if (root) return root;
    const cbor = this.cbor;
    cbor.reset();
    cbor.byte(CBOR_ARRAY_OF_3);
    cbor.uint64(this.seed.hi, this.seed.lo);
    cbor.byte(CBOR_NULL);
    const name = new TextEncoder().encode(model);
    cbor.head(3, name.length);
    for (const b of name) cbor.byte(b);
    root = fnv64a(cbor.bytes, cbor.length, { hi: 0, lo: 0 });
    if (this.roots.size > 1024) this.roots.clear();
    this.roots.set(model, root);
    return root;
  }

  /**
   * The key of the block `tokens[from, from + blockSizeTokens)` after `parent`, written into `out`
   * (which may be `parent`).
   */
  next(parent: Key64, tokens: ArrayLike<number>, from: number, out: Key64): Key64 {
    const cbor = this.cbor;
    const size = this.blockSizeTokens;
    cbor.reset();
    cbor.byte(CBOR_ARRAY_OF_3);
    cbor.uint64(parent.hi, parent.lo);
    cbor.head(4, size);
    for (let i = from; i < from + size; i++) cbor.head(0, tokens[i]!);
    cbor.byte(CBOR_NULL);
    return fnv64a(cbor.bytes, cbor.length, out);
  }

  /** Folded keys of the full blocks of `tokens` (at most `maxBlocks`), chained from `model`'s root. */
  keys(tokens: ArrayLike<number>, model: string, maxBlocks = Number.POSITIVE_INFINITY): Float64Array {
    const n = Math.min(maxBlocks, Math.floor(tokens.length / this.blockSizeTokens));
    const out = new Float64Array(n);
    const chain = { ...this.root(model) };
    for (let i = 0; i < n; i++) {
      this.next(chain, tokens, i * this.blockSizeTokens, chain);
      out[i] = foldKey(chain.hi, chain.lo);
    }
    return out;
  }
}
