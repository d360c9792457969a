/**
 * Incremental chat ids for the stand-in tokenizer (`CharChunkTokenizer`: a token per 4 UTF-16 code
 * units of `renderChat`'s text, a chunk crossing message boundaries where it falls). Chunk `k` is a
 * function of code units `[4k, 4k + 4)` alone, so a turn that extends held messages has the held
 * ids for every chunk that ends inside them: the messages of recent conversations are held in a
 * `MessageTrie`, found by comparison as the real tokenizer's incremental encoder finds them
 * (incremental.ts), and only the text from the held messages' last whole chunk on is encoded (their
 * last 0–3 code units, the new messages, the generation prompt). The ids go into the conversation's
 * append-only `ConversationIds` array, so the prefix producers keep their block keys with it
 * (kv-index/held-keys.ts) and a turn derives only the keys of the blocks it adds. A turn whose ids
 * disagree with those written after the held messages gets a new array with the held ids copied:
 * a fork, or a turn after a prompt whose last chunk was short (it is short unless the prompt ends
 * on a chunk boundary: the next turn's chunk there is whole).
 */
import {
  CHAT_GENERATION_PROMPT,
  CHAT_MESSAGE_END,
  type ChatMessageLike,
  chatHeader,
  renderedMessageUnits,
} from "../api/prompt.ts";
import { type MessageText, messageTexts } from "./chat.ts";
import { ConversationIds } from "./conversation-ids.ts";
import { type HeldIds, MessageTrie } from "./message-trie.ts";
import { CHARS_PER_TOKEN, type CharChunkTokenizer } from "./tokenizer.ts";

/** Code units of message `m` in `renderChat`'s text: its header, its text and its end. */
function renderedUnits(m: MessageText): number {
  return renderedMessageUnits(m.role, m.text.length);
}

/** The last `n` code units (fewer than all) of message `m` as `renderChat` renders it. */
function lastUnits(m: MessageText, n: number): string {
  let units = "";
  let left = n;
  // From the end, piece by piece: the message's text is never copied whole.
  for (const piece of [CHAT_MESSAGE_END, m.text, chatHeader(m.role)]) {
    if (left === 0) break;
    const take = Math.min(left, piece.length);
    units = piece.slice(piece.length - take) + units;
    left -= take;
  }
  return units;
}

/** Chat prompts to stand-in ids, encoding only the text after the held messages' last whole chunk. */
export class Char4Conversations {
  readonly trie: MessageTrie;

  constructor(
    private readonly tokenizer: CharChunkTokenizer,
    cacheBytes: number,
  ) {
    this.trie = new MessageTrie(cacheBytes);
  }

  /**
   * `tokenizer.encode(renderChat(messages))`, as a view of the conversation's ids array; null
   * when `renderChat`'s text of `messages` would not be `units` code units long (the prompt was
   * rendered otherwise).
   */
  encodeChat(messages: readonly ChatMessageLike[], units: number): Uint32Array | null {
    const all = messageTexts(messages);
    let total = CHAT_GENERATION_PROMPT.length;
    for (const m of all) total += renderedUnits(m);
    if (total !== units) return null;
    const path = this.trie.match(all);
    const base = path[path.length - 1] ?? this.trie.root;
    let held = 0;
    for (const m of path) held += renderedUnits(m);
    const whole = Math.floor(held / CHARS_PER_TOKEN);
    const fresh = all.slice(path.length);
    const pieces = [lastUnits(base, held - whole * CHARS_PER_TOKEN)];
    for (const m of fresh) pieces.push(chatHeader(m.role), m.text, CHAT_MESSAGE_END);
    pieces.push(CHAT_GENERATION_PROMPT);
    const tail = this.tokenizer.encodeText(pieces);
    let array = base.ids;
    let end = array.append(whole, [tail]);
    if (end < 0) {
      array = ConversationIds.copyOf(base.ids.view(whole), tail.length);
      end = array.append(whole, [tail]);
    }
    this.trie.extend(path, fresh, placed(array, held, fresh));
    return array.view(end);
  }
}

/**
 * Where each fresh message's ids are in `ids`: from the chunk after the last one ending inside the
 * messages before it (`held` code units of them) to the last one ending inside it.
 */
function placed(ids: ConversationIds, held: number, fresh: readonly MessageText[]): HeldIds[] {
  const at: HeldIds[] = [];
  let units = held;
  let start = Math.floor(held / CHARS_PER_TOKEN);
  for (const m of fresh) {
    units += renderedUnits(m);
    const end = Math.floor(units / CHARS_PER_TOKEN);
    at.push({ ids, start, end });
    start = end;
  }
  return at;
}
