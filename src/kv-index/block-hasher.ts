/**
 * Prefix block hashing as llm-d's approximate prefix index does it (reference §2.7):
 * block id = xxhash64 of the block's token ids as little-endian uint32 bytes; chain
 * `h_i = xxhash64(le64(blockId_i) ‖ le64(h_{i−1}))` with `h_{−1} = xxhash64(model ‖ cacheSalt)`.
 *
 * Hot path: one Uint8Array view over the token buffer, one reusable 16-byte chain buffer, no
 * per-block objects beyond the BigInt xxhash-wasm returns. Each chained hash is kept as a 53-bit
 * JS number (its low 53 bits), which is what the index keys on: exact in a Float64Array and
 * cheap as a Map key. 53 bits make an accidental collision negligible at any index size we hold.
 */
import xxhash from "xxhash-wasm";

const { h64, h64Raw } = await xxhash();

const TWO_POW_32 = 4294967296;
const HIGH_21_BITS = 0x1fffff;

const chainBytes = new Uint8Array(16);
const chainView = new DataView(chainBytes.buffer);

/** Seed of one (model, cache salt) pair: xxhash64 of their UTF-8 concatenation. */
export function prefixSeed(model: string, cacheSalt = ""): bigint {
  return h64(model + cacheSalt);
}

/** Number of blocks a prompt of `tokenCount` tokens has (the trailing partial block counts). */
export function blockCount(tokenCount: number, blockSizeTokens: number): number {
  return Math.ceil(tokenCount / blockSizeTokens);
}

/**
 * Chained hashes of the first `min(maxBlocks, blockCount)` blocks of `tokens`, as 53-bit numbers.
 * `blockSizeTokens` ≥ 1. Writes into `out` when it is large enough, else allocates.
 * Relies on a little-endian host (x86, arm64) for the token byte order.
 */
export function hashPrefixBlocks(
  tokens: Uint32Array,
  blockSizeTokens: number,
  maxBlocks: number,
  seed: bigint,
  out?: Float64Array,
): Float64Array {
  const n = Math.min(maxBlocks, blockCount(tokens.length, blockSizeTokens));
  const keys = out && out.length >= n ? out : new Float64Array(n);
  const bytes = new Uint8Array(tokens.buffer, tokens.byteOffset, tokens.length * 4);
  const blockBytes = blockSizeTokens * 4;
  chainView.setBigUint64(8, seed, true);
  for (let i = 0; i < n; i++) {
    const start = i * blockBytes;
    const blockId = h64Raw(bytes.subarray(start, Math.min(start + blockBytes, bytes.length)));
    chainView.setBigUint64(0, blockId, true);
    chainView.setBigUint64(8, h64Raw(chainBytes), true);
    keys[i] = (chainView.getUint32(12, true) & HIGH_21_BITS) * TWO_POW_32 + chainView.getUint32(8, true);
  }
  return keys;
}
