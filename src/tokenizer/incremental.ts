/**
 * Incremental chat tokenization: a chat prompt's segments (one per message, see
 * `ChatTokenizer.chatSegments`) have ids that are exact wherever they occur, because no BPE merge
 * crosses the special tokens that end them. The messages of recent conversations are held in a
 * `MessageTrie`, so on a conversation's next turn its earlier messages are found by comparison
 * with the held ones and only the new messages are rendered and tokenized. Each conversation's ids
 * are one growing `ConversationIds` array: a turn that continues it writes its new ids after the
 * held ones and the prompt is a view of the array, so neither the event loop nor the garbage
 * collector touches the conversation's earlier ids. With a worker, all new text is tokenized
 * there, and a turn that needs a new array (a fork, a conversation outgrowing its array, a new
 * conversation) gets it built there too, with the shared prefix copied and the turn's ids in it;
 * the event loop only compares, renders the new messages and writes a continuing turn's ids; the tokenizer
 * itself (tens of MB of heap, which every full GC of the event loop's thread would walk) is loaded
 * on this thread only when there is no worker.
 */
import type { ChatMessageLike } from "../api/prompt.ts";
import { type ChatTemplate, type ChatTokenizer, type MessageText, messageTexts } from "./chat.ts";
import { type BuiltIds, ConversationIds, idsLength } from "./conversation-ids.ts";
import { type HeldIds, type MessageNode, MessageTrie } from "./message-trie.ts";
import { CHAT_TEMPLATES, loadTokenizer, type ModelTokenizerName } from "./registry.ts";
import type { BuildRequest, Encoded, WorkerEncoder } from "./worker-encoder.ts";

/** A chat turn split at what the trie holds: its held path, the messages after it and their segments. */
interface Plan {
  path: MessageNode[];
  /** The last held message (the trie's root when none is). */
  base: MessageNode;
  fresh: MessageText[];
  /** The segments to tokenize: the fresh messages', then the template's end while its ids are unknown. */
  texts: string[];
}

/** Chat prompts to token ids, re-tokenizing only messages not seen recently. */
export class IncrementalEncoder {
  readonly trie: MessageTrie;
  private readonly template: ChatTemplate;
  private endIds: Uint32Array | null = null;
  private worker: WorkerEncoder | null = null;
  private local: ChatTokenizer | null = null;

  constructor(
    readonly tokenizer: ModelTokenizerName,
    cacheBytes: number,
  ) {
    this.trie = new MessageTrie(cacheBytes);
    this.template = CHAT_TEMPLATES[tokenizer];
  }

  /** Tokenizes new text on `worker` from now on (null: on this thread). */
  useWorker(worker: WorkerEncoder | null): void {
    this.worker = worker;
  }

  /** The chat prompt's ids; a promise when new text went to the worker. */
  encodeChat(messages: readonly ChatMessageLike[]): Uint32Array | Promise<Uint32Array> {
    const plan = this.plan(messages);
    if (plan.texts.length === 0 || this.worker === null) return this.encodeHere(plan);
    // A dead worker costs the event loop, never the request.
    const tokenized = this.worker
      .encode(plan.texts, false, this.buildRequest(plan))
      .catch((): Encoded => ({ ids: this.tokenizeHere(plan.texts), built: null }));
    return tokenized.then(({ ids, built }) => this.complete(plan, ids, built));
  }

  /** A completions prompt's ids (not cached: a prompt seldom repeats whole). */
  encodePrompt(text: string): Uint32Array | Promise<Uint32Array> {
    if (!this.worker) return this.onThisThread().encodePrompt(text);
    return this.worker
      .encode([text], true)
      .then(({ ids }) => ids[0]!)
      .catch(() => this.onThisThread().encodePrompt(text));
  }

  /** The chat prompt's ids, tokenized on this thread whatever the worker (the simulator's path). */
  encodeChatHere(messages: readonly ChatMessageLike[]): Uint32Array {
    return this.encodeHere(this.plan(messages));
  }

  private plan(messages: readonly ChatMessageLike[]): Plan {
    const all = messageTexts(messages);
    const path = this.trie.match(all);
    const fresh = all.slice(path.length);
    const texts = fresh.map((m, k) => this.template.segment(m, path.length + k));
    if (this.endIds === null) texts.push(this.template.end);
    const base = path[path.length - 1] ?? this.trie.root;
    return { path, base, fresh, texts };
  }

  /**
   * The array the worker builds for the turn when its ids cannot follow the base's in the base's
   * array: always for a fork (the base's array goes on past the base and the prompt end written
   * after it: another turn continued there), else when the new ids and the prompt end do not fit
   * (a conversation outgrowing its array, or a new one: the root's array holds nothing).
   */
  private buildRequest({ base }: Plan): BuildRequest {
    const endLength = this.endIds?.length ?? 0;
    const forked = base.ids.length > base.end + endLength;
    return {
      source: base.ids.buffer,
      prefix: base.end,
      fits: forked ? 0 : base.ids.capacity,
      room: endLength,
    };
  }

  private encodeHere(plan: Plan): Uint32Array {
    return this.complete(plan, this.tokenizeHere(plan.texts));
  }

  /**
   * Writes the fresh messages' ids (`ids`, in `plan.texts` order) and the prompt end after the
   * base's, holds the messages and returns the prompt's ids: a view of the conversation's array,
   * which is the base's when the turn continues it, else the one the worker built (`built`, with
   * the base's ids and `ids` already in it) or a copy of the base's ids made here.
   */
  private complete(plan: Plan, ids: readonly Uint32Array[], built: BuiltIds | null = null): Uint32Array {
    const { path, base, fresh } = plan;
    // A copy: the worker's ids may be views of a conversation's array, which this must not keep.
    this.endIds ??= ids[fresh.length]!.slice();
    const tail = ids.slice(0, fresh.length);
    const freshEnd = base.end + idsLength(tail);
    tail.push(this.endIds);
    let array = built ? ConversationIds.adopt(built, base.ids.view(base.end)) : base.ids;
    let end = built ? array.append(freshEnd, [this.endIds]) : array.append(base.end, tail);
    if (end < 0) {
      array = ConversationIds.copyOf(base.ids.view(base.end), idsLength(tail));
      end = array.append(base.end, tail);
    }
    this.trie.extend(path, fresh, placed(array, base.end, tail));
    return array.view(end);
  }

  private tokenizeHere(texts: readonly string[]): Uint32Array[] {
    return texts.map((text) => this.onThisThread().encode(text));
  }

  private onThisThread(): ChatTokenizer {
    this.local ??= loadTokenizer(this.tokenizer);
    return this.local;
  }
}

/** Where each fresh message's ids landed in `ids`, the first at `from` (the prompt end excluded). */
function placed(ids: ConversationIds, from: number, tail: readonly Uint32Array[]): HeldIds[] {
  const at: HeldIds[] = [];
  let start = from;
  for (let k = 0; k < tail.length - 1; k++) {
    at.push({ ids, start, end: start + tail[k]!.length });
    start += tail[k]!.length;
  }
  return at;
}
