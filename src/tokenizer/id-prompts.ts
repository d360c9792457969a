/**
 * Token-id prompts held by their leading ids. A completions prompt sent as token ids that continues
 * one seen before (an agent framework's next turn, sent as ids; a retry; another sample of the same
 * prompt) becomes a longer view of the same append-only `ConversationIds` array, so the prefix
 * producers keep their block keys with it (kv-index/held-keys.ts) and derive only the keys of the
 * blocks it adds, as for a chat's held ids. A prompt that shares a held one's start but then
 * differs gets a new array with the shared ids copied, which starts with their keys. The arrays
 * least recently used go past the byte budget.
 */
import { ConversationIds } from "./conversation-ids.ts";

/** The default byte budget: about 300 prompts of 200K ids. */
export const DEFAULT_ID_PROMPT_BYTES = 256 * 1024 * 1024;

/** Prompts shorter than this are keyed from scratch (a few blocks: holding them saves nothing). */
export const MIN_HELD_IDS = 4096;

/** Ids hashed to find the held arrays a prompt may continue. */
const START_IDS = 256;

/** Held arrays per start (prompts sharing a system prompt share a start), most recent first. */
const PER_START = 8;

/** FNV-1a over the first `START_IDS` ids. */
function startKey(ids: Uint32Array): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < START_IDS; i++) hash = Math.imul(hash ^ ids[i]!, 0x01000193);
  return hash >>> 0;
}

/** The number of leading ids `a` and `b` share, found by `memcmp`s (Buffer#equals) of halving spans. */
export function sharedIds(a: Uint32Array, b: Uint32Array): number {
  const bytes = (ids: Uint32Array, from: number, to: number) =>
    Buffer.from(ids.buffer, ids.byteOffset + from * 4, (to - from) * 4);
  let low = 0;
  let high = Math.min(a.length, b.length);
  if (bytes(a, 0, high).equals(bytes(b, 0, high))) return high;
  // Invariant: [0, low) agree, and [low, high) holds a difference.
  while (high - low > 64) {
    const middle = (low + high) >>> 1;
    if (bytes(a, low, middle).equals(bytes(b, low, middle))) low = middle;
    else high = middle;
  }
  while (a[low] === b[low]) low++;
  return low;
}

/** Token-id prompts' append-only arrays, found by their first ids, within `budgetBytes`. */
export class HeldIdPrompts {
  /** Arrays by start key, least recently used key first; each list most recent first. */
  private readonly byStart = new Map<number, ConversationIds[]>();
  private heldBytes = 0;

  constructor(private readonly budgetBytes: number) {}

  /** Bytes of the held arrays. */
  get bytes(): number {
    return this.heldBytes;
  }

  /**
   * `ids` (a prompt's token ids) as a view of a held array with the same ids: the array of a held
   * prompt it continues (extended in place), else a new one, with the ids it shares with the held
   * prompt closest to it copied. Prompts under `MIN_HELD_IDS`, and every prompt with a budget of
   * 0, come back as they are.
   */
  hold(ids: Uint32Array): Uint32Array {
    if (ids.length < MIN_HELD_IDS || this.budgetBytes === 0) return ids;
    const key = startKey(ids);
    const list = this.byStart.get(key) ?? [];
    let best: ConversationIds | undefined;
    let shared = 0;
    for (const array of list) {
      const n = sharedIds(array.view(array.length), ids);
      if (n > shared || best === undefined) {
        best = array;
        shared = n;
      }
      if (n === array.length || n === ids.length) break;
    }
    let array = best;
    const rest = ids.subarray(shared);
    if (!array || array.append(shared, [rest]) < 0) {
      array = ConversationIds.copyOf(best ? best.view(shared) : ids.subarray(0, 0), rest.length);
      array.append(shared, [rest]);
      this.heldBytes += array.bytes;
    }
    this.remember(key, list, array);
    return array.view(ids.length);
  }

  /** Puts `array` first in its start's list and its start last in use, then drops what is past the budget. */
  private remember(key: number, list: ConversationIds[], array: ConversationIds): void {
    const at = list.indexOf(array);
    if (at >= 0) list.splice(at, 1);
    list.unshift(array);
    if (list.length > PER_START) this.heldBytes -= list.pop()!.bytes;
    this.byStart.delete(key);
    this.byStart.set(key, list);
    for (const [oldest, arrays] of this.byStart) {
      if (this.heldBytes <= this.budgetBytes || arrays === list) break;
      for (const dropped of arrays) this.heldBytes -= dropped.bytes;
      this.byStart.delete(oldest);
    }
  }
}
