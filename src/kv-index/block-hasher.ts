/**
 * Prefix block hashing for the router's approximate prefix index (reference §2.7, with our own
 * hash function: the index is the router's own, nothing outside compares its keys).
 *
 * A prompt is cut into blocks of `blockSizeTokens` tokens, trailing partial block included. With
 * token ids, a block is `blockSizeTokens` ids; with text (no tokens known), a block is
 * `blockSizeTokens × 4` UTF-16 code units, exactly the characters the built-in tokenizer turns
 * into those tokens, so block boundaries are identical either way and text never needs
 * tokenizing on the router's hot path (llm-d's earlier character-based hashing, §2.7 History).
 *
 * Key of block i = a 53-bit digest of everything from the start through block i, salted with the
 * (model, cache salt) seed: a chained hash, so equal keys mean equal prefixes. The hash is a
 * four-lane multiply-rotate over 32-bit words (two code units, or one token id, per word) whose
 * state runs through the whole prompt, finalised per block; four independent lanes keep the
 * CPU's multipliers busy (≈ 0.3 ms for 200K tokens of text). Keys are JS numbers, exact in a
 * Float64Array, and 53 bits make an accidental collision negligible at any index size we hold.
 */
import type { TextPiece } from "../api/prompt.ts";
import { CHARS_PER_TOKEN } from "../tokenizer/tokenizer.ts";
import { textLength, utf16Words } from "../tokenizer/utf16-words.ts";

const TWO_POW_32 = 4294967296;
const LOW_21_BITS = 0x1fffff;
const M1 = 0xcc9e2d51 | 0;
const M2 = 0x1b873593 | 0;
const F1 = 0x85ebca6b | 0;
const F2 = 0xc2b2ae35 | 0;
const UNITS_PER_WORD_TEXT = 2;

/** Number of blocks a prompt of `tokenCount` tokens has (the trailing partial block counts). */
export function blockCount(tokenCount: number, blockSizeTokens: number): number {
  return Math.ceil(tokenCount / blockSizeTokens);
}

/** Murmur3's 32-bit finaliser: every input bit affects every output bit. */
function fmix(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, F1);
  x ^= x >>> 13;
  x = Math.imul(x, F2);
  return x ^ (x >>> 16);
}

/**
 * Seed of one (model, cache salt) pair, a 53-bit number; differs between models and between
 * salts of the same model (llm-d seeds with model ‖ cache salt).
 */
export function prefixSeed(model: string, cacheSalt = ""): number {
  const key = cacheSalt === "" ? model : `${model}\u0000${cacheSalt}`;
  let a = 0x9e3779b9 | 0;
  let b = 0x7f4a7c15 | 0;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, M1);
    b = Math.imul((b ^ c) + (a >>> 17), M2);
  }
  return (fmix(b ^ key.length) & LOW_21_BITS) * TWO_POW_32 + (fmix(a) >>> 0);
}

/** Output array of `n` keys: `out` when large enough, else a new one. */
function keysArray(n: number, out: Float64Array | undefined): Float64Array {
  return out && out.length >= n ? out : new Float64Array(n);
}

/** Lanes of the hash state after a block, as `resumePrefixBlocks` records them. */
export const HASH_LANES = 4;

/** No recorded lanes: a hash from the seed that records none reads and writes none. */
const NO_LANES = new Int32Array(0);

/** A whole hash of `blocks` blocks from `seed` into `keys`, as a resume from block 0 that records nothing. */
function fromSeed(blocks: number, seed: number, keys: Float64Array): HashResume {
  return { first: 0, blocks, seed, keys, lanes: NO_LANES, record: false };
}

/**
 * The chained keys of blocks `first` to `blocks - 1` of `words` (`wordsPerBlock` words each, the
 * last block possibly shorter), where the prompt is `units` units long, `unitsPerWord` per word.
 * From the seed when `first` is 0, else from the state block `first - 1` left in `lanes`
 * (`HASH_LANES` per block); each block's state is recorded there when `record`.
 */
function hashWordBlocks(
  words: Uint32Array,
  wordsPerBlock: number,
  units: number,
  unitsPerWord: number,
  blocks: number,
  seed: number,
  keys: Float64Array,
  first: number,
  lanes: Int32Array,
  record: boolean,
): void {
  const seedLo = seed | 0;
  const seedHi = Math.floor(seed / TWO_POW_32) | 0;
  const from = (first - 1) * HASH_LANES;
  let a = first === 0 ? seedLo ^ M1 : lanes[from]!;
  let b = first === 0 ? seedHi ^ M2 : lanes[from + 1]!;
  let c = first === 0 ? seedLo ^ F1 : lanes[from + 2]!;
  let d = first === 0 ? seedHi ^ F2 : lanes[from + 3]!;
  const total = words.length;
  for (let i = first; i < blocks; i++) {
    const start = i * wordsPerBlock;
    const end = Math.min(start + wordsPerBlock, total);
    let j = start;
    for (; j + 3 < end; j += 4) {
      a = Math.imul(a ^ words[j]!, M1);
      b = Math.imul(b ^ words[j + 1]!, M2);
      c = Math.imul(c ^ words[j + 2]!, M1);
      d = Math.imul(d ^ words[j + 3]!, M2);
      a = (a << 15) | (a >>> 17);
      b = (b << 15) | (b >>> 17);
      c = (c << 13) | (c >>> 19);
      d = (d << 13) | (d >>> 19);
    }
    for (; j < end; j++) a = Math.imul(((a << 11) | (a >>> 21)) ^ words[j]!, F1);
    // The unit count tells a short last block from the same units padded with zero words.
    const blockUnits = Math.min(wordsPerBlock * unitsPerWord, units - start * unitsPerWord);
    const lo = fmix(a ^ Math.imul(c, F1) ^ blockUnits);
    const hi = fmix(b ^ Math.imul(d, F2) ^ lo);
    a ^= hi;
    b ^= lo;
    keys[i] = (hi & LOW_21_BITS) * TWO_POW_32 + (lo >>> 0);
    if (record) {
      const at = i * HASH_LANES;
      lanes[at] = a;
      lanes[at + 1] = b;
      lanes[at + 2] = c;
      lanes[at + 3] = d;
    }
  }
}

/**
 * Chained keys of the first `min(maxBlocks, blockCount)` blocks of token ids `tokens`.
 * `blockSizeTokens` ≥ 1. Writes into `out` when it is large enough, else allocates.
 */
export function hashPrefixBlocks(
  tokens: Uint32Array,
  blockSizeTokens: number,
  maxBlocks: number,
  seed: number,
  out?: Float64Array,
): Float64Array {
  const n = Math.min(maxBlocks, blockCount(tokens.length, blockSizeTokens));
  const keys = keysArray(n, out);
  resumePrefixBlocks(tokens, blockSizeTokens, fromSeed(n, seed, keys));
  return keys;
}

/**
 * A hash resumed part way: the keys of blocks `first` to `blocks - 1`, written into `keys` at their
 * block index, from the state of block `first - 1` in `lanes` (`HASH_LANES` per block, as a
 * recording call left them) or from `seed` when `first` is 0. With `record`, each block's state is
 * kept in `lanes`, so a later call resumes after it.
 */
export interface HashResume {
  first: number;
  blocks: number;
  seed: number;
  keys: Float64Array;
  lanes: Int32Array;
  record: boolean;
}

/** `hashPrefixBlocks`'s keys of `tokens`, resumed (`at`): a conversation's next turn hashes only its new blocks. */
export function resumePrefixBlocks(tokens: Uint32Array, blockSizeTokens: number, at: HashResume): void {
  const { first, blocks, seed, keys, lanes, record } = at;
  hashWordBlocks(tokens, blockSizeTokens, tokens.length, 1, blocks, seed, keys, first, lanes, record);
}

/**
 * Chained keys of the first `min(maxBlocks, blockCount)` blocks of `text`, a block being
 * `blockSizeTokens × 4` code units (the characters of that many built-in tokens), without
 * tokenizing. `text` is one string or pieces whose concatenation is the prompt, ASCII byte pieces
 * included (same keys either way). Only the hashed prefix of the text is read. Writes into `out`
 * when large enough.
 */
export function hashTextBlocks(
  text: string | readonly TextPiece[],
  blockSizeTokens: number,
  maxBlocks: number,
  seed: number,
  out?: Float64Array,
): Float64Array {
  const n = Math.min(maxBlocks, Math.ceil(textLength(text) / (blockSizeTokens * CHARS_PER_TOKEN)));
  const keys = keysArray(n, out);
  resumeTextBlocks(text, blockSizeTokens, fromSeed(n, seed, keys));
  return keys;
}

/** `hashTextBlocks`'s keys of `text`, resumed (`at`): a long text hashed in parts, with the same keys. */
export function resumeTextBlocks(
  text: string | readonly TextPiece[],
  blockSizeTokens: number,
  at: HashResume,
): void {
  const { first, blocks, seed, keys, lanes, record } = at;
  const blockUnits = blockSizeTokens * CHARS_PER_TOKEN;
  const units = Math.min(textLength(text), blocks * blockUnits);
  const words = utf16Words(text, units);
  const wordsPerBlock = blockUnits / UNITS_PER_WORD_TEXT;
  hashWordBlocks(words, wordsPerBlock, units, UNITS_PER_WORD_TEXT, blocks, seed, keys, first, lanes, record);
}
