/**
 * Incremental chat tokenization: a chat prompt's segments (one per message, see
 * `ChatTokenizer.chatSegments`) are looked up in a byte-bounded LRU, so on a conversation's next
 * turn only the new messages are tokenized; the earlier ones are byte-identical segments whose ids
 * are exact wherever they occur, because no BPE merge crosses the special tokens that end them.
 * With a worker, all new text is tokenized there and the event loop only renders, looks up and
 * concatenates; the tokenizer itself (tens of MB of heap, which every full GC of the event loop's
 * thread would walk) is loaded on this thread only when there is no worker.
 */
import type { ChatMessageLike } from "../api/prompt.ts";
import { type ChatTemplate, type ChatTokenizer, concatIds } from "./chat.ts";
import { CHAT_TEMPLATES, loadTokenizer, type TokenizerName } from "./registry.ts";
import { SegmentCache } from "./segment-cache.ts";
import type { WorkerEncoder } from "./worker-encoder.ts";

/** Chat prompts to token ids, re-tokenizing only segments not seen recently. */
export class IncrementalEncoder {
  readonly cache: SegmentCache;
  private readonly template: ChatTemplate;
  private worker: WorkerEncoder | null = null;
  private local: ChatTokenizer | null = null;

  constructor(
    readonly tokenizer: TokenizerName,
    cacheBytes: number,
  ) {
    this.cache = new SegmentCache(cacheBytes);
    this.template = CHAT_TEMPLATES[tokenizer];
  }

  /** Tokenizes new text on `worker` from now on (null: on this thread). */
  useWorker(worker: WorkerEncoder | null): void {
    this.worker = worker;
  }

  /** The chat prompt's ids; a promise when new text went to the worker. */
  encodeChat(messages: readonly ChatMessageLike[]): Uint32Array | Promise<Uint32Array> {
    return this.encodeSegments(this.template(messages));
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
    const { parts, missed, texts } = this.lookup(this.template(messages));
    if (texts.length > 0) this.fill(parts, missed, texts, this.encodeHere(texts));
    return concatIds(parts);
  }

  /** The ids of `segments` concatenated; each missed segment is encoded and cached. */
  encodeSegments(segments: readonly string[]): Uint32Array | Promise<Uint32Array> {
    const { parts, missed, texts } = this.lookup(segments);
    if (texts.length === 0) return concatIds(parts);
    if (this.worker === null) {
      this.fill(parts, missed, texts, this.encodeHere(texts));
      return concatIds(parts);
    }
    // A dead worker costs the event loop, never the request.
    return this.worker
      .encode(texts)
      .catch(() => this.encodeHere(texts))
      .then((ids) => {
        this.fill(parts, missed, texts, ids);
        return concatIds(parts);
      });
  }

  /** The cached ids of `segments` (empty where missed), the missed indices and their texts. */
  private lookup(segments: readonly string[]): { parts: Uint32Array[]; missed: number[]; texts: string[] } {
    const parts: Uint32Array[] = [];
    const missed: number[] = [];
    const texts: string[] = [];
    for (let i = 0; i < segments.length; i++) {
      const ids = this.cache.get(segments[i]!);
      parts.push(ids ?? EMPTY);
      if (!ids) {
        missed.push(i);
        texts.push(segments[i]!);
      }
    }
    return { parts, missed, texts };
  }

  private encodeHere(texts: readonly string[]): Uint32Array[] {
    return texts.map((text) => this.onThisThread().encode(text));
  }

  private onThisThread(): ChatTokenizer {
    this.local ??= loadTokenizer(this.tokenizer);
    return this.local;
  }

  private fill(parts: Uint32Array[], missed: number[], texts: string[], ids: Uint32Array[]): void {
    for (let k = 0; k < missed.length; k++) {
      parts[missed[k]!] = ids[k]!;
      this.cache.set(texts[k]!, ids[k]!);
    }
  }
}

const EMPTY = new Uint32Array(0);
