/**
 * llm-d plugin types that llmd does not implement (yet), with the issue that will bring each, so a
 * config using one fails with a precise message instead of "unknown type". A type registered in the
 * plugin registry always wins over this table.
 */

const FLOW_CONTROL = "issue #5: flow control";
const PREFIX_AND_LOAD = "issue #3: prefix-cache, load and session plugins";
const NOT_PLANNED = "not yet planned";
const POOL_BUILT_IN =
  "not yet planned as a config plugin: llmd's endpoint pool does this built in (see `llmd router --endpoints`/`--endpoints-file`)";

const groups: readonly [string, readonly string[]][] = [
  [
    FLOW_CONTROL,
    [
      "global-strict-fairness-policy",
      "round-robin-fairness-policy",
      "program-aware-fairness",
      "fcfs-ordering-policy",
      "edf-ordering-policy",
      "slo-deadline-ordering-policy",
      "program-score-ordering-policy",
      "utilization-detector",
      "concurrency-detector",
      "static-usage-limit-policy",
      "priority-holdback-policy",
      "soft-reflective-ceiling-policy",
      "probabilistic-admitter",
      "latency-slo-admitter",
      "sheddable-eviction-filter",
      "priority-then-time-eviction-order-policy",
    ],
  ],
  [
    PREFIX_AND_LOAD,
    [
      "approx-prefix-cache-producer",
      "prefix-cache-scorer",
      "prefix-cache-affinity-filter",
      "no-hit-lru-scorer",
      "inflight-load-producer",
      "token-producer",
      "token-load-scorer",
      "load-aware-scorer",
      "active-request-scorer",
      "session-id-producer",
      "agent-identity",
      "session-affinity-filter",
      "session-affinity-scorer",
    ],
  ],
  [
    NOT_PLANNED,
    [
      // P/D and E/P/D disaggregation, data-parallel and header-driven handlers.
      "disagg-profile-handler",
      "pd-profile-handler",
      "data-parallel-profile-handler",
      "header-profile-handler",
      "disagg-headers-handler",
      "prefill-header-handler",
      "prefix-based-pd-decider",
      "always-disagg-pd-decider",
      "always-disagg-multimodal-decider",
      // Precise prefix cache (vLLM KV events) and other producers.
      "precise-prefix-cache-producer",
      "precise-prefix-cache-scorer",
      "burst-prefix-cache-producer",
      "p2p-source-producer",
      "predicted-latency-producer",
      "mm-embeddings-cache-producer",
      "mm-embeddings-cache-scorer",
      "session-state-producer",
      "session-manager",
      // Other scorers and filters.
      "latency-scorer",
      "context-length-aware",
      "header-label-affinity-scorer",
      "endpoint-attribute-scorer",
      "endpoint-attribute-filter",
      "topology-affinity-scorer",
      "topology-affinity-filter",
      "slo-headroom-tier-filter",
      "header-based-testing-filter",
      "multicluster-kv-cache-utilization-scorer",
      "multicluster-queue-scorer",
      "multicluster-prefix-cache-scorer",
      "multicluster-session-affinity-filter",
      "disaggregatedset-rollout-screener",
      "request-attribute-reporter",
      // Data layer sources and extractors without a built-in equivalent.
      "topology-extractor",
      "dcgm-data-source",
      "dcgm-extractor",
      "k8s-notification-source",
      "endpoint-notification-source",
      "multicluster-file-discovery",
      "multicluster-metrics-data-source",
      "multicluster-metrics-data-extractor",
      // Request parsers: the gateway parses OpenAI requests itself.
      "openai-parser",
      "anthropic-parser",
      "vllmhttp-parser",
      "sglanghttp-parser",
      "vllmgrpc-parser",
      "vertexai-parser",
      "passthrough-parser",
    ],
  ],
  [
    POOL_BUILT_IN,
    [
      "metrics-data-source",
      "core-metrics-extractor",
      "models-data-source",
      "models-data-extractor",
      "file-discovery",
    ],
  ],
];

/** llm-d type → where llmd stands on it ("issue #N: title" or "not yet planned…"). */
export const PLANNED_PLUGINS: ReadonlyMap<string, string> = new Map(
  groups.flatMap(([plan, types]) => types.map((type) => [type, plan] as const)),
);
