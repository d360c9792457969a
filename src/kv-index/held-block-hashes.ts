/**
 * `hashPrefixBlocks` for prompts that are views of a conversation's append-only ids array
 * (`ConversationIds`, from the incremental chat encoder): the keys of the array's full blocks are
 * kept with the array (`held-keys.ts`), per seed and block size, with each block's hash state, so
 * a conversation's next turn hashes only the blocks it adds (≈ 30 of a 200K-token prompt's 3,200
 * at 64 tokens a block) and a shorter view resumes where its own last full block ends; a fork's
 * array starts with the keys of the blocks it copied. Any other prompt is hashed whole.
 */
import { blockCount, HASH_LANES, hashPrefixBlocks, resumePrefixBlocks } from "./block-hasher.ts";
import { heldKeysOf } from "./held-keys.ts";

/**
 * `hashPrefixBlocks(tokens, blockSizeTokens, maxBlocks, seed)`, the same keys in a new array,
 * computing only the full blocks not kept yet (and the trailing partial block) when `tokens` is
 * an append-only conversation's view.
 */
export function heldPrefixBlocks(
  tokens: Uint32Array,
  blockSizeTokens: number,
  maxBlocks: number,
  seed: number,
): Float64Array {
  const kept = heldKeysOf(tokens, `prefix:${seed}`, blockSizeTokens, HASH_LANES);
  if (!kept) return hashPrefixBlocks(tokens, blockSizeTokens, maxBlocks, seed);
  const n = Math.min(maxBlocks, blockCount(tokens.length, blockSizeTokens));
  const full = Math.min(n, Math.floor(tokens.length / blockSizeTokens));
  const at = { first: kept.blocks, blocks: full, seed, keys: kept.keys, lanes: kept.state, record: true };
  if (kept.blocks < full) {
    resumePrefixBlocks(tokens, blockSizeTokens, at);
    kept.blocks = full;
  }
  const out = new Float64Array(n);
  out.set(kept.keys.subarray(0, full));
  if (n > full)
    resumePrefixBlocks(tokens, blockSizeTokens, { ...at, first: full, blocks: n, keys: out, record: false });
  return out;
}
