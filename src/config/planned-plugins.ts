/**
 * llm-d plugin types that llmd does not implement (yet), with the issue that will bring each, so a
 * config using one fails with a precise message instead of "unknown type". A type registered in the
 * plugin registry always wins over this table.
 */

const FLOW_CONTROL = "issue #5: flow control";
const PREFIX_AND_LOAD = "issue #3: prefix-cache, load and session plugins";
const PD = "not yet planned: prefill/decode (and encode) disaggregation needs the P/D sidecar protocol";
const KV_EVENTS = "not yet planned: precise prefix caching needs vLLM KV-cache events over ZMQ";
const NOT_PLANNED = "not yet planned";

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
    PD,
    [
      "disagg-profile-handler",
      "pd-profile-handler",
      "header-profile-handler",
      "disagg-headers-handler",
      "prefill-header-handler",
      "prefix-based-pd-decider",
      "always-disagg-pd-decider",
      "always-disagg-multimodal-decider",
      "p2p-source-producer",
      "disaggregatedset-rollout-screener",
    ],
  ],
  [KV_EVENTS, ["precise-prefix-cache-producer", "precise-prefix-cache-scorer"]],
  [
    "not yet planned: multimodal encoder-cache affinity needs image/video/audio prompt parsing",
    ["mm-embeddings-cache-producer", "mm-embeddings-cache-scorer"],
  ],
  [
    "not yet planned: GPU telemetry needs an NVIDIA DCGM exporter source",
    ["dcgm-data-source", "dcgm-extractor"],
  ],
  [
    "not yet planned: topology affinity needs host/rack/zone labels and a P/D peer endpoint",
    ["topology-extractor", "topology-affinity-scorer", "topology-affinity-filter"],
  ],
  [
    "not yet planned: burst (RL rollout group) batching onto shared replicas",
    ["burst-prefix-cache-producer"],
  ],
  [
    "not yet planned: multi-cluster routing (clusters as endpoints)",
    [
      "multicluster-kv-cache-utilization-scorer",
      "multicluster-queue-scorer",
      "multicluster-prefix-cache-scorer",
      "multicluster-session-affinity-filter",
      "multicluster-file-discovery",
      "multicluster-metrics-data-source",
      "multicluster-metrics-data-extractor",
    ],
  ],
  [
    "not yet planned: Kubernetes object watches (use file-discovery or --endpoints)",
    ["k8s-notification-source"],
  ],
  [
    NOT_PLANNED,
    [
      "predicted-latency-producer",
      "session-state-producer",
      "session-manager",
      "latency-scorer",
      "context-length-aware",
      "header-label-affinity-scorer",
      "endpoint-attribute-scorer",
      "endpoint-attribute-filter",
      "slo-headroom-tier-filter",
      "header-based-testing-filter",
      "request-attribute-reporter",
    ],
  ],
  [
    "not yet planned: the gateway parses OpenAI requests itself",
    [
      "openai-parser",
      "anthropic-parser",
      "vllmhttp-parser",
      "sglanghttp-parser",
      "vllmgrpc-parser",
      "vertexai-parser",
      "passthrough-parser",
    ],
  ],
];

/** llm-d type → where llmd stands on it ("issue #N: title" or "not yet planned…"). */
export const PLANNED_PLUGINS: ReadonlyMap<string, string> = new Map(
  groups.flatMap(([plan, types]) => types.map((type) => [type, plan] as const)),
);
