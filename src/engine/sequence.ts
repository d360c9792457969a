/**
 * One request inside the engine: its prompt, its block table and its progress, vLLM-style: `computed`
 * tokens have KV, `total` = prompt + generated tokens, and a step that brings `computed` to `total`
 * samples the next token.
 */
import type { EngineRequest } from "./types.ts";

/** Where a sequence is. `done` = finished or aborted (stale entries in the waiting deque are skipped). */
export type SequenceState = "waiting" | "running" | "done";

/** Mutable per-request state owned by the engine. */
export class Sequence {
  readonly id: string;
  readonly prompt: Uint32Array;
  readonly maxTokens: number;
  readonly lora: string | null;
  /** vLLM priority: lower is served first (only under the `priority` scheduling policy). */
  readonly priority: number;
  /** Enqueue order, set by the scheduler; breaks priority ties. */
  arrival = 0;
  /** Chained hashes of the prompt's whole blocks. */
  readonly hashes: Float64Array;
  state: SequenceState = "waiting";
  /** GPU block ids, in token order. */
  readonly blocks: number[] = [];
  /** Tokens whose KV is in `blocks`. */
  computed = 0;
  /** Prompt + generated tokens. */
  total: number;
  generated = 0;
  /** True once the (re)prefill has finished: each step then computes exactly one token. */
  decoding = false;
  firstEmitted = false;
  /** Prompt tokens served from cache (GPU or offload) at first scheduling. */
  cachedTokens = 0;
  /** `computed` right after the last admission (to tell a prefill's first chunk). */
  prefillStart = 0;
  /** Leading blocks already registered in the prefix cache (or skipped as duplicates). */
  committed = 0;
  /** Tokens scheduled in the current step; meaningful while `scheduled`. */
  stepTokens = 0;
  scheduled = false;
  /** False until first admitted (prefix-cache queries are counted once per request). */
  admittedOnce = false;
  /** Leading prompt tokens a remote prefill computed; used at first admission only. */
  readonly remoteKvTokens: number;
  /** Keep the blocks after finishing, for a remote decode to pull. */
  readonly holdKvOnFinish: boolean;

  constructor(req: EngineRequest, hashes: Float64Array) {
    this.id = req.id;
    this.prompt = req.promptTokens;
    this.maxTokens = Math.max(1, Math.floor(req.maxTokens));
    this.lora = req.lora ?? null;
    this.priority = req.priority ?? 0;
    this.hashes = hashes;
    this.total = req.promptTokens.length;
    this.remoteKvTokens = Math.max(0, Math.floor(req.remoteKvTokens ?? 0));
    this.holdKvOnFinish = req.holdKvOnFinish ?? false;
  }

  /** Prompt length in tokens. */
  get promptLen(): number {
    return this.prompt.length;
  }
}
