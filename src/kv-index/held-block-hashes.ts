/**
 * `hashPrefixBlocks` for prompts that are views of a conversation's append-only ids array
 * (`ConversationIds`, from the incremental chat encoder): the keys of the array's full blocks are
 * kept with the array, per seed and block size, with each block's hash state, so a conversation's
 * next turn hashes only the blocks it adds (≈ 30 of a 200K-token prompt's 3,200 at 64 tokens a
 * block) and a shorter view resumes where its own last full block ends; a fork's array starts
 * with the keys of the blocks it copied. The ids of such an array never change once written, which
 * is what makes a kept key valid for every later view. Any other prompt is hashed whole.
 */
import { copiedFrom, isAppendOnly } from "../tokenizer/conversation-ids.ts";
import { blockCount, HASH_LANES, hashPrefixBlocks, resumePrefixBlocks } from "./block-hasher.ts";

/** The kept keys of one array's leading full blocks under one seed and block size. */
interface HeldKeys {
  readonly seed: number;
  readonly blockSizeTokens: number;
  keys: Float64Array;
  lanes: Int32Array;
  /** Full blocks hashed so far. */
  blocks: number;
}

/** Kept keys per array buffer, freed with the array. */
const held = new WeakMap<ArrayBufferLike, HeldKeys[]>();

function find(buffer: ArrayBufferLike, blockSizeTokens: number, seed: number): HeldKeys | undefined {
  return held.get(buffer)?.find((h) => h.seed === seed && h.blockSizeTokens === blockSizeTokens);
}

/**
 * The kept keys of `tokens`' array, made on first use: starting with the keys of the blocks it
 * shares with the array it copied its first ids from (a fork's base), when that one has them.
 */
function heldKeys(tokens: Uint32Array, blockSizeTokens: number, seed: number): HeldKeys {
  const found = find(tokens.buffer, blockSizeTokens, seed);
  if (found) return found;
  const capacity = Math.floor(tokens.buffer.byteLength / Uint32Array.BYTES_PER_ELEMENT / blockSizeTokens);
  const fresh = {
    seed,
    blockSizeTokens,
    keys: new Float64Array(capacity),
    lanes: new Int32Array(capacity * HASH_LANES),
    blocks: 0,
  };
  const copied = copiedFrom(tokens);
  const source = copied?.source.deref();
  const base = source && find(source, blockSizeTokens, seed);
  if (copied && base) {
    fresh.blocks = Math.min(base.blocks, Math.floor(copied.length / blockSizeTokens));
    fresh.keys.set(base.keys.subarray(0, fresh.blocks));
    fresh.lanes.set(base.lanes.subarray(0, fresh.blocks * HASH_LANES));
  }
  const all = held.get(tokens.buffer);
  if (all) all.push(fresh);
  else held.set(tokens.buffer, [fresh]);
  return fresh;
}

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
  if (!isAppendOnly(tokens)) return hashPrefixBlocks(tokens, blockSizeTokens, maxBlocks, seed);
  const n = Math.min(maxBlocks, blockCount(tokens.length, blockSizeTokens));
  const full = Math.min(n, Math.floor(tokens.length / blockSizeTokens));
  const kept = heldKeys(tokens, blockSizeTokens, seed);
  if (kept.blocks < full) {
    resumePrefixBlocks(tokens, blockSizeTokens, kept.blocks, full, seed, kept.keys, kept.lanes, true);
    kept.blocks = full;
  }
  const out = new Float64Array(n);
  out.set(kept.keys.subarray(0, full));
  if (n > full) resumePrefixBlocks(tokens, blockSizeTokens, full, n, seed, out, kept.lanes, false);
  return out;
}
