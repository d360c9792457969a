/**
 * Which metrics each model-server engine exposes, in the shape of llm-d's `core-metrics-extractor`
 * `engineConfigs` (specs use the `name{label=value}` syntax). The engine of an endpoint is chosen
 * by its `llm-d.ai/engine-type` label, defaulting to vLLM.
 */

/** A custom metric copied into `Endpoint.attributes[attributeKey]` as a number. */
export interface CustomMetricConfig {
  attributeKey: string;
  metricSpec: string;
}

/** One engine's metric names (llm-d's `engineConfigs[]` entry; field names are llm-d's). */
export interface EngineMetricsConfig {
  name: string;
  queuedRequestsSpec?: string;
  runningRequestsSpec?: string;
  /** Gauge in 0..1. */
  kvUsageSpec?: string;
  /** Info gauge whose value is a timestamp; labels `max_lora`, `running_lora_adapters`, `waiting_lora_adapters`. */
  loraSpec?: string;
  /** Info gauge carrying block size and block count as labels. */
  cacheInfoSpec?: string;
  cacheBlockSizeLabelName?: string;
  cacheNumBlocksLabelName?: string;
  /** Alternatives to `cacheInfoSpec` for engines exposing them as plain gauges. */
  cacheBlockSizeSpec?: string;
  cacheNumBlocksSpec?: string;
  customMetrics?: CustomMetricConfig[];
}

/** llm-d's `core-metrics-extractor` parameters. */
export interface MetricsExtractorOptions {
  /** Label selecting the engine (default `llm-d.ai/engine-type`). */
  engineLabelKey?: string;
  /** Engine used when the label is absent (default `vllm`). */
  defaultEngine?: string;
  /** Added to, or replacing by name, the built-in engines. */
  engineConfigs?: EngineMetricsConfig[];
}

/** Default label naming an endpoint's engine. */
export const ENGINE_LABEL = "llm-d.ai/engine-type";

/** Engine assumed when an endpoint has no engine label. */
export const DEFAULT_ENGINE = "vllm";

/** Built-in engines (llm-d reference §3). */
export const BUILTIN_ENGINES: readonly EngineMetricsConfig[] = [
  {
    name: "vllm",
    queuedRequestsSpec: "vllm:num_requests_waiting",
    runningRequestsSpec: "vllm:num_requests_running",
    kvUsageSpec: "vllm:kv_cache_usage_perc",
    loraSpec: "vllm:lora_requests_info",
    cacheInfoSpec: "vllm:cache_config_info",
    cacheBlockSizeLabelName: "block_size",
    cacheNumBlocksLabelName: "num_gpu_blocks",
  },
  {
    name: "sglang",
    queuedRequestsSpec: "sglang:num_queue_reqs",
    runningRequestsSpec: "sglang:num_running_reqs",
    kvUsageSpec: "sglang:token_usage",
    cacheInfoSpec: "sglang:cache_config_info",
    cacheBlockSizeLabelName: "page_size",
    cacheNumBlocksLabelName: "num_pages",
  },
  {
    name: "trtllm-serve",
    queuedRequestsSpec: "trtllm_num_requests_waiting",
    runningRequestsSpec: "trtllm_num_requests_running",
    kvUsageSpec: "trtllm_kv_cache_utilization",
    cacheBlockSizeSpec: "trtllm_kv_cache_tokens_per_block",
    cacheNumBlocksSpec: "trtllm_kv_cache_max_blocks",
  },
  {
    name: "triton-tensorrt-llm",
    queuedRequestsSpec: "nv_trt_llm_request_metrics{request_type=waiting}",
    runningRequestsSpec: "nv_trt_llm_request_metrics{request_type=scheduled}",
    kvUsageSpec: "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=fraction}",
    cacheBlockSizeSpec: "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=tokens_per}",
    cacheNumBlocksSpec: "nv_trt_llm_kv_cache_block_metrics{kv_cache_block_type=max}",
  },
  {
    name: "triton",
    queuedRequestsSpec: "nv_inference_pending_request_count",
    runningRequestsSpec: "nv_inference_exec_count",
  },
];
