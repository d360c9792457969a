/**
 * The router's view of one model-server endpoint (one address:port; a data-parallel rank is its
 * own endpoint). Metrics are what the last scrape saw plus what the router dispatched since.
 */

/** Scraped model-server metrics, normalised across engines (vLLM, SGLang, …). */
export interface EndpointMetrics {
  waitingQueueSize: number;
  runningRequestsSize: number;
  /** 0..1 */
  kvCacheUsagePercent: number;
  /** Tokens per KV block (`vllm:cache_config_info{block_size}`), 0 if unknown. */
  cacheBlockSize: number;
  /** GPU KV blocks (`vllm:cache_config_info{num_gpu_blocks}`), 0 if unknown. */
  cacheNumBlocks: number;
  activeModels: string[];
  waitingModels: string[];
  maxActiveModels: number;
  /** Clock time (ms) of the scrape these values came from; 0 = never scraped. */
  updatedAtMs: number;
  /** Requests the router dispatched to this endpoint since that scrape (to avoid overshoot). */
  dispatchedSinceScrape: number;
}

/** Identity and static facts of an endpoint. */
export interface EndpointMetadata {
  /** Unique key: `namespace/name` (a rank adds `-rank-N`). */
  key: string;
  name: string;
  namespace: string;
  address: string;
  port: number;
  labels: Readonly<Record<string, string>>;
  /** Data-parallel rank when the server exposes several ranks, else undefined. */
  dpRank?: number;
}

/**
 * An endpoint as plugins see it. `attributes` holds typed data written by producers for this
 * scheduling cycle or kept across cycles (keys are producer-defined strings).
 */
export interface Endpoint {
  readonly metadata: EndpointMetadata;
  readonly metrics: EndpointMetrics;
  readonly attributes: Map<string, unknown>;
}

/** Fresh zeroed metrics (never scraped). */
export function emptyMetrics(): EndpointMetrics {
  return {
    waitingQueueSize: 0,
    runningRequestsSize: 0,
    kvCacheUsagePercent: 0,
    cacheBlockSize: 0,
    cacheNumBlocks: 0,
    activeModels: [],
    waitingModels: [],
    maxActiveModels: 0,
    updatedAtMs: 0,
    dispatchedSinceScrape: 0,
  };
}

/** `llm-d.ai/role` label values and what they serve. */
export const ROLE_LABEL = "llm-d.ai/role";
/** Role values that can prefill (llm-d's prefill-filter). */
export const PREFILL_ROLES: readonly string[] = [
  "prefill",
  "encode-prefill",
  "prefill-decode",
  "both",
  "encode-prefill-decode",
];
/** Role values that can decode (llm-d's decode-filter, which also keeps unlabeled endpoints). */
export const DECODE_ROLES: readonly string[] = ["decode", "prefill-decode", "both", "encode-prefill-decode"];
/** Role values that can encode (llm-d's encode-filter). */
export const ENCODE_ROLES: readonly string[] = ["encode", "encode-prefill", "encode-prefill-decode"];
