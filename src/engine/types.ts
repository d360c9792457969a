/**
 * Contract of the model-server engine core: a pure, clock-driven model of one vLLM replica
 * (paged KV cache with prefix caching and offload tiers, continuous batching, a timing model).
 * No timers and no I/O: a host (the `llmd sim` HTTP server, or the fleet simulator) drives it.
 *
 * Driving loop, in virtual or wall time alike:
 *   engine.add(req, now)                 // any time
 *   const step = engine.step(now)        // when idle-and-has-work, or when the previous step ended
 *   ... at now + step.durationMs: deliver step.outputs to clients, then call step() again.
 * A step's outputs become visible at its end; `step()` returns null when nothing can run.
 */

/** A request as the engine sees it: token ids in, a number of tokens out. */
export interface EngineRequest {
  /** Unique while the request lives in the engine. */
  id: string;
  /** Prompt token ids (the engine hashes whole blocks of these for prefix caching). */
  promptTokens: Uint32Array;
  /** Tokens to generate; the host decides content and stop conditions, the engine only counts. */
  maxTokens: number;
  /** Optional LoRA adapter name (separates prefix caches; reported in `vllm:lora_requests_info`). */
  lora?: string;
  /** Salt mixed into block hashes (vLLM's `cache_salt`); requests with different salts share nothing. */
  cacheSalt?: string;
  /**
   * vLLM's per-request priority, any finite number: LOWER is served first, ties by arrival. Used only
   * with `schedulingPolicy: "priority"`; default 0.
   */
  priority?: number;
  /**
   * Leading prompt tokens whose KV arrived from a remote prefill (P/D decode leg): on first
   * admission they count as computed, beyond local prefix hits, and the last prompt token is still
   * recomputed to sample the first output. Default 0.
   */
  remoteKvTokens?: number;
  /**
   * P/D prefill leg: when the request finishes its blocks stay referenced (held for a decode to pull)
   * until `releaseHeld(id)` or `abort(id)`. Default false.
   */
  holdKvOnFinish?: boolean;
}

/** Why `add` refused a request (a value, not an exception). */
export type AddRejection = { reason: "too-long"; maxModelLen: number } | { reason: "duplicate-id" };

/** Per-request result of one step. */
export interface StepOutput {
  id: string;
  /** Tokens produced by this step (0 while a chunked prefill is still in progress). */
  newTokens: number;
  /** Total generated so far, including this step's. */
  generated: number;
  /** True on the step that produced the first output token. */
  first: boolean;
  /** True when `generated === maxTokens`; the request has left the engine. */
  finished: boolean;
  /** Prompt tokens served from cache when the request was (last) scheduled; set when `first`. */
  cachedTokens: number;
}

/** One batch step: what ran and how long it took. */
export interface StepResult {
  startMs: number;
  durationMs: number;
  /** Prefill tokens computed this step (after cache hits). */
  prefillTokens: number;
  /** Sequences decoded this step. */
  decodeSeqs: number;
  outputs: StepOutput[];
  /** Ids preempted (by recompute) during this step's scheduling; they go back to waiting. */
  preempted: string[];
}

/** Gauges and counters in vLLM's terms; cumulative counters only grow. */
export interface EngineStats {
  running: number;
  waiting: number;
  /**
   * GPU KV blocks referenced by running sequences, 0..1 (`vllm:kv_cache_usage_perc`). As in vLLM, cached
   * blocks no request references count as free: they are evictable.
   */
  kvUsage: number;
  blockSize: number;
  numGpuBlocks: number;
  /** CPU offload tier capacity in blocks (0 = off; `num_cpu_blocks` of `vllm:cache_config_info`). */
  numCpuBlocks: number;
  /** GPU blocks by state: blank, cached-but-unreferenced, referenced; they sum to `numGpuBlocks`. */
  freeBlocks: number;
  cachedBlocks: number;
  usedBlocks: number;
  /** Blocks currently held by the CPU / storage offload tiers. */
  cpuBlocksHeld: number;
  storageBlocksHeld: number;
  /** Prompt tokens looked up in the prefix cache (`vllm:prefix_cache_queries`). */
  prefixQueries: number;
  /** Of those, tokens found cached (`vllm:prefix_cache_hits`). */
  prefixHits: number;
  /**
   * Tokens loaded instead of recomputed: from an offload tier or a remote prefill's transfer
   * (`vllm:external_prefix_cache_hits`).
   */
  offloadHits: number;
  /** Finished requests whose blocks are held for a remote decode, and those blocks. */
  heldRequests: number;
  heldBlocks: number;
  preemptions: number;
  /** GPU blocks evicted from the prefix cache (LRU). */
  evictions: number;
  promptTokens: number;
  generationTokens: number;
  /** Adapters of running and waiting requests. */
  runningLoras: string[];
  waitingLoras: string[];
}

/** Where a KV block lives. vLLM's `medium` values. */
export type KvTier = "GPU" | "CPU" | "DISK";

/** KV events in vLLM's vocabulary; hashes are the engine's 64-bit block hashes. */
export type KvEvent =
  | {
      type: "BlockStored";
      blockHashes: bigint[];
      parentBlockHash: bigint | null;
      tokenIds: number[];
      blockSize: number;
      lora: string | null;
      medium: KvTier;
    }
  | { type: "BlockRemoved"; blockHashes: bigint[]; medium: KvTier }
  | { type: "AllBlocksCleared" };

/** The engine core. */
export interface Engine {
  /** Queues a request at `nowMs`; returns a rejection instead of throwing for expected refusals. */
  add(req: EngineRequest, nowMs: number): AddRejection | null;
  /** Removes a request wherever it is (held included) and frees its blocks at once; false if unknown. */
  abort(id: string): boolean;
  /**
   * Leading prompt tokens of `req` the GPU prefix cache holds now, by vLLM's hit rule (whole
   * blocks, never the last prompt token); changes nothing. A P/D decode pulls only the rest.
   */
  cachedPrefixTokens(req: Pick<EngineRequest, "promptTokens" | "lora" | "cacheSalt">): number;
  /** GPU block ids a finished `holdKvOnFinish` request holds, in token order; undefined if none. */
  heldBlockIds(id: string): readonly number[] | undefined;
  /** Frees the blocks a finished `holdKvOnFinish` request holds; false if it holds none. */
  releaseHeld(id: string): boolean;
  /** Schedules and runs one batch step starting at `nowMs`; null when there is nothing to run. */
  step(nowMs: number): StepResult | null;
  /** True while any request is waiting or running. */
  hasWork(): boolean;
  stats(): EngineStats;
  /**
   * Forgets every cached prefix block on all tiers and emits AllBlocksCleared (vLLM's
   * `/reset_prefix_cache`); false, doing nothing, while any request holds blocks.
   */
  resetPrefixCache(): boolean;
  /** Subscribes to KV events (emitted synchronously during `add`/`step`/`abort`). Returns unsubscribe. */
  onKvEvent(listener: (events: KvEvent[]) => void): () => void;
}
