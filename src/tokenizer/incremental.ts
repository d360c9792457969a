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
    const tokenized = this.worker.encode(plan.texts).catch(() => this.tokenizeHere(plan.texts));
    const prompt = prefill(plan, this.endIds?.length ?? 0);
    return tokenized.then((ids) => this.complete(plan, ids, prompt));
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

  /**
   * Holds the fresh messages' ids (`ids`, in `plan.texts` order) and returns the prompt's: written
   * after the held ids `prompt` already has when they fit its room, else concatenated.
   */
  private complete(plan: Plan, ids: readonly Uint32Array[], prompt: Prefilled | null = null): Uint32Array {
    const { path, fresh } = plan;
    this.endIds ??= ids[fresh.length]!;
    this.trie.extend(path, fresh, ids);
    const tail = ids.slice(0, fresh.length);
    tail.push(this.endIds);
    return (prompt && finish(prompt, tail)) ?? concatIds([...path.map((n) => n.ids), ...tail]);
  }

  private tokenizeHere(texts: readonly string[]): Uint32Array[] {
    return texts.map((text) => this.onThisThread().encode(text));
  }

  private onThisThread(): ChatTokenizer {
    this.local ??= loadTokenizer(this.tokenizer);
    return this.local;
  }
}

/** A prompt's ids written up to the held messages' while the worker tokenizes the rest. */
interface Prefilled {
  ids: Uint32Array;
  length: number;
}

/**
 * The held messages' ids copied into an array with room for the fresh text at one token per
 * UTF-16 code unit (prose and code stay well within it) and for the template's end, while the
 * worker tokenizes: copying a long conversation's ids leaves the decision's critical path. Only
 * for a turn short next to what is held (an eighth at most), so the spare room stays small.
 */
function prefill({ path, texts }: Plan, endLength: number): Prefilled | null {
  let held = 0;
  for (const n of path) held += n.ids.length;
  let room = endLength;
  for (const text of texts) room += text.length;
  if (room > held / 8) return null;
  const ids = new Uint32Array(held + room);
  let length = 0;
  for (const n of path) {
    ids.set(n.ids, length);
    length += n.ids.length;
  }
  return { ids, length };
}

/** The prompt's ids with `tail` written after the held ones; null when the tail outgrows the room. */
function finish(prompt: Prefilled, tail: readonly Uint32Array[]): Uint32Array | null {
  let length = prompt.length;
  for (const part of tail) length += part.length;
  if (length > prompt.ids.length) return null;
  length = prompt.length;
  for (const part of tail) {
    prompt.ids.set(part, length);
    length += part.length;
  }
  return prompt.ids.subarray(0, length);
}
