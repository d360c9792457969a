/**
 * Incremental chat tokenization: a chat prompt's segments (one per message, see
 * `ChatTokenizer.chatSegments`) are looked up in a byte-bounded LRU, so on a conversation's next
 * turn only the new messages are tokenized; the earlier ones are byte-identical segments whose ids
 * are exact wherever they occur, because no BPE merge crosses the special tokens that end them.
 * New text beyond a small inline budget is encoded on a worker thread.
 */
import type { ChatMessageLike } from "../api/prompt.ts";
import { type ChatTokenizer, concatIds } from "./chat.ts";
import { SegmentCache } from "./segment-cache.ts";
import type { WorkerEncoder } from "./worker-encoder.ts";

/** Sizing of an {@link IncrementalEncoder}. */
export interface IncrementalOptions {
  /** Byte budget of the segment cache. */
  cacheBytes: number;
  /** New text (UTF-16 code units, all missed segments together) encoded on the caller's thread. */
  inlineUnits: number;
}

/** Chat prompts to token ids, re-tokenizing only segments not seen recently. */
export class IncrementalEncoder {
  readonly cache: SegmentCache;
  private worker: WorkerEncoder | null = null;

  constructor(
    readonly tokenizer: ChatTokenizer,
    private readonly options: IncrementalOptions,
  ) {
    this.cache = new SegmentCache(options.cacheBytes);
  }

  /** Sends new text beyond the inline budget to `worker` (null: everything inline). */
  useWorker(worker: WorkerEncoder | null): void {
    this.worker = worker;
  }

  /** The chat prompt's ids; a promise when new text went to the worker. */
  encodeChat(messages: readonly ChatMessageLike[]): Uint32Array | Promise<Uint32Array> {
    return this.encodeSegments(this.tokenizer.chatSegments(messages));
  }

  /** The ids of `segments` concatenated; each missed segment is encoded and cached. */
  encodeSegments(segments: readonly string[]): Uint32Array | Promise<Uint32Array> {
    const parts: Uint32Array[] = [];
    const missed: number[] = [];
    let missedUnits = 0;
    for (let i = 0; i < segments.length; i++) {
      const ids = this.cache.get(segments[i]!);
      if (ids) parts.push(ids);
      else {
        parts.push(EMPTY);
        missed.push(i);
        missedUnits += segments[i]!.length;
      }
    }
    if (missed.length === 0) return concatIds(parts);
    const texts = missed.map((i) => segments[i]!);
    const inline = () => texts.map((text) => this.tokenizer.encode(text));
    if (this.worker === null || missedUnits <= this.options.inlineUnits) {
      this.fill(parts, missed, texts, inline());
      return concatIds(parts);
    }
    // A dead worker costs the event loop, never the request.
    return this.worker
      .encode(texts)
      .catch(inline)
      .then((ids) => {
        this.fill(parts, missed, texts, ids);
        return concatIds(parts);
      });
  }

  private fill(parts: Uint32Array[], missed: number[], texts: string[], ids: Uint32Array[]): void {
    for (let k = 0; k < missed.length; k++) {
      parts[missed[k]!] = ids[k]!;
      this.cache.set(texts[k]!, ids[k]!);
    }
  }
}

const EMPTY = new Uint32Array(0);
