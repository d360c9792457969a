/**
 * Incremental chat tokenization: a chat prompt's segments (one per message, see
 * `ChatTokenizer.chatSegments`) have ids that are exact wherever they occur, because no BPE merge
 * crosses the special tokens that end them. The messages of recent conversations and their ids
 * are held in a `MessageTrie`, so on a conversation's next turn its earlier messages are found by
 * comparison with the held ones and only the new messages are rendered and tokenized. With a
 * worker, all new text is tokenized there and the event loop only compares, renders the new
 * messages and concatenates ids; the tokenizer itself (tens of MB of heap, which every full GC of
 * the event loop's thread would walk) is loaded on this thread only when there is no worker.
 */
import type { ChatMessageLike } from "../api/prompt.ts";
import { type ChatTemplate, type ChatTokenizer, concatIds, type MessageText, messageTexts } from "./chat.ts";
import { type MessageNode, MessageTrie } from "./message-trie.ts";
import { CHAT_TEMPLATES, loadTokenizer, type ModelTokenizerName } from "./registry.ts";
import type { WorkerEncoder } from "./worker-encoder.ts";

/** A chat turn split at what the trie holds: its held path, the messages after it and their segments. */
interface Plan {
  path: MessageNode[];
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
    return this.worker
      .encode(plan.texts)
      .catch(() => this.tokenizeHere(plan.texts))
      .then((ids) => this.complete(plan, ids));
  }

  /** A completions prompt's ids (not cached: a prompt seldom repeats whole). */
  encodePrompt(text: string): Uint32Array | Promise<Uint32Array> {
    if (!this.worker) return this.onThisThread().encodePrompt(text);
    return this.worker
      .encode([text], true)
      .then((ids) => ids[0]!)
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
    return { path, fresh, texts };
  }

  private encodeHere(plan: Plan): Uint32Array {
    return this.complete(plan, this.tokenizeHere(plan.texts));
  }

  /** Holds the fresh messages' ids (`ids`, in `plan.texts` order) and concatenates the prompt's. */
  private complete({ path, fresh }: Plan, ids: readonly Uint32Array[]): Uint32Array {
    this.endIds ??= ids[fresh.length]!;
    this.trie.extend(path, fresh, ids);
    const parts = path.map((n) => n.ids);
    for (let k = 0; k < fresh.length; k++) parts.push(ids[k]!);
    parts.push(this.endIds);
    return concatIds(parts);
  }

  private tokenizeHere(texts: readonly string[]): Uint32Array[] {
    return texts.map((text) => this.onThisThread().encode(text));
  }

  private onThisThread(): ChatTokenizer {
    this.local ??= loadTokenizer(this.tokenizer);
    return this.local;
  }
}
