/**
 * Chained block keys kept with a conversation's append-only ids array (`ConversationIds`), one set
 * per key scheme (a hash, its seed or chain root, and its block size), with each block's hash state
 * after it, so the keys of a longer view of the array resume where the kept ones end. A fork's
 * array starts with the keys of the full blocks it copied from its base's array. The ids of such an
 * array never change once written, which is what makes a kept key valid for every later view.
 * Used by `held-block-hashes.ts` (the approximate producers' keys) and `PreciseIndex` (llm-d's
 * CBOR-FNV request keys); each extends the kept keys itself, in bulk or as far as a match reaches.
 */
import { copiedFrom, isAppendOnly } from "../tokenizer/conversation-ids.ts";

/** The kept keys of one array's leading full blocks under one scheme. */
export interface HeldKeys {
  readonly scheme: string;
  readonly blockSizeTokens: number;
  /** Block i's key; room for every full block the array's buffer can hold. */
  readonly keys: Float64Array;
  /** Block i's hash state after it (and what else the scheme keeps per block), `stateWords` words from `i * stateWords`. */
  readonly state: Int32Array;
  /** Leading full blocks kept: `keys` and `state` are valid below it. */
  blocks: number;
}

/** Kept keys per array buffer, freed with the array. */
const held = new WeakMap<ArrayBufferLike, HeldKeys[]>();

function find(buffer: ArrayBufferLike, scheme: string, blockSizeTokens: number): HeldKeys | undefined {
  return held.get(buffer)?.find((h) => h.scheme === scheme && h.blockSizeTokens === blockSizeTokens);
}

/**
 * The kept keys of `tokens`' array under `scheme` (an identity: equal strings mean equal keys for
 * equal ids) and `blockSizeTokens`, made on first use and then starting with the keys of the blocks
 * it shares with the array it copied its first ids from, when that one has them; undefined when
 * `tokens` is not a view of an append-only array.
 */
export function heldKeysOf(
  tokens: Uint32Array,
  scheme: string,
  blockSizeTokens: number,
  stateWords: number,
): HeldKeys | undefined {
  if (!isAppendOnly(tokens)) return undefined;
  const found = find(tokens.buffer, scheme, blockSizeTokens);
  if (found) return found;
  const capacity = Math.floor(tokens.buffer.byteLength / Uint32Array.BYTES_PER_ELEMENT / blockSizeTokens);
  const fresh: HeldKeys = {
    scheme,
    blockSizeTokens,
    keys: new Float64Array(capacity),
    state: new Int32Array(capacity * stateWords),
    blocks: 0,
  };
  const copied = copiedFrom(tokens);
  const source = copied?.source.deref();
  const base = source && find(source, scheme, blockSizeTokens);
  if (copied && base) {
    fresh.blocks = Math.min(base.blocks, Math.floor(copied.length / blockSizeTokens));
    fresh.keys.set(base.keys.subarray(0, fresh.blocks));
    fresh.state.set(base.state.subarray(0, fresh.blocks * stateWords));
  }
  const all = held.get(tokens.buffer);
  if (all) all.push(fresh);
  else held.set(tokens.buffer, [fresh]);
  return fresh;
}
