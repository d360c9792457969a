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

/** Bytes a CBOR head of an argument < 2^64 may take. */
const MAX_HEAD_BYTES = 9;

/**
 * Writes a canonical CBOR head (major type and argument < 2^32, shortest form) at `at` and returns
 * the position after it. Plain functions over a buffer sized up front: no bounds check per byte.
 */
function writeHead(out: Uint8Array, at: number, major: number, value: number): number {
  const m = major << 5;
  if (value < 24) {
    out[at] = m | value;
    return at + 1;
  }
  if (value < 0x100) {
    out[at] = m | 24;
    out[at + 1] = value;
    return at + 2;
  }
  if (value < 0x10000) {
    out[at] = m | 25;
    out[at + 1] = value >>> 8;
    out[at + 2] = value & 0xff;
    return at + 3;
  }
  out[at] = m | 26;
  return writeWord(out, at + 1, value);
}

function writeWord(out: Uint8Array, at: number, v: number): number {
  out[at] = v >>> 24;
  out[at + 1] = (v >>> 16) & 0xff;
  out[at + 2] = (v >>> 8) & 0xff;
  out[at + 3] = v & 0xff;
  return at + 4;
}

/** An unsigned 64-bit integer in canonical CBOR. */
function writeUint64(out: Uint8Array, at: number, hi: number, lo: number): number {
  if (hi === 0) return writeHead(out, at, 0, lo);
  out[at] = 27;
  return writeWord(out, writeWord(out, at + 1, hi), lo);
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

const M1 = 0xcc9e2d51 | 0;
const M2 = 0x1b873593 | 0;

function fmix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return x ^ (x >>> 16);
}

/**
 * A fast 53-bit digest of (parent key, block tokens `tokens[from, from + size)`), about 1 ns a token
 * against CBOR-FNV's 35: the index remembers each request key it holds under this digest of how it
 * was derived, so the key of a block whose parent and tokens it has seen is a lookup, not a hash.
 */
export function blockDerivation(
  parent: Key64,
  tokens: ArrayLike<number>,
  from: number,
  size: number,
): number {
  let a = parent.lo ^ M1;
  let b = parent.hi ^ M2;
  for (let i = from; i < from + size; i++) {
    const v = tokens[i]!;
    a = Math.imul(((a << 15) | (a >>> 17)) ^ v, M1);
    b = (Math.imul(((b << 13) | (b >>> 19)) ^ v, M2) + a) | 0;
  }
  const lo = fmix(a ^ size);
  const hi = fmix(b ^ lo);
  return foldKey(hi, lo);
}

/** Computes request keys for one `(blockSizeTokens, hashSeed)` configuration; roots cached per model. */
export class RequestKeyHasher {
  /** One block's CBOR: `[parent, tokens, null]` takes at most 1 + 9 + 9 + 5 per token + 1 bytes. */
  private readonly cbor: Uint8Array;
  private readonly seed: Key64;
  private readonly roots = new Map<string, Key64>();

  constructor(
    /** Tokens per request block (≥ 1). */
    readonly blockSizeTokens: number,
    hashSeed = "",
  ) {
    this.cbor = new Uint8Array(2 + 2 * MAX_HEAD_BYTES + 5 * blockSizeTokens);
    const utf8 = new TextEncoder().encode(hashSeed);
    this.seed = fnv64a(utf8, utf8.length, { hi: 0, lo: 0 });
  }

  /** The chain's root for `model` (a LoRA adapter's name stands in for the model when set). */
  root(model: string): Key64 {
    let root = this.roots.get(model);
    if (root) return root;
    const name = new TextEncoder().encode(model);
    const out = new Uint8Array(3 + 2 * MAX_HEAD_BYTES + name.length);
    out[0] = CBOR_ARRAY_OF_3;
    let at = writeUint64(out, 1, this.seed.hi, this.seed.lo);
    out[at++] = CBOR_NULL;
    at = writeHead(out, at, 3, name.length);
    out.set(name, at);
    root = fnv64a(out, at + name.length, { hi: 0, lo: 0 });
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
    cbor[0] = CBOR_ARRAY_OF_3;
    let at = writeUint64(cbor, 1, parent.hi, parent.lo);
    at = writeHead(cbor, at, 4, size);
    for (let i = from; i < from + size; i++) at = writeHead(cbor, at, 0, tokens[i]!);
    cbor[at++] = CBOR_NULL;
    return fnv64a(cbor, at, out);
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
