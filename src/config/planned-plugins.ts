/**
 * llm-d plugin types that llmd does not implement, each with what is missing, so a config using
 * one fails with a precise message instead of "unknown type". A type registered in the plugin
 * registry always wins over this table.
 */

const groups: readonly [string, readonly string[]][] = [
  [
    "P/D beyond disagg-profile-handler (not built: deprecated P/D handlers, the coordinator's header handler, P2P KV pull)",
    [
      "pd-profile-handler",
      "header-profile-handler",
      "disagg-headers-handler",
      "prefill-header-handler",
      "p2p-source-producer",
    ],
  ],
  [
    "latency prediction and SLO headroom (not built: needs a latency predictor)",
    ["predicted-latency-producer", "latency-scorer", "slo-headroom-tier-filter", "latency-slo-admitter"],
  ],
  [
    "multi-cluster routing with clusters as endpoints (not built)",
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
  ["Kubernetes object watches (not built: use file-discovery or --endpoints)", ["k8s-notification-source"]],
  ["per-program session tags and ordering (not built)", ["session-manager", "program-score-ordering-policy"]],
  ["context-length-range routing (not built)", ["context-length-aware"]],
  [
    "generic header plugins (not built)",
    ["header-label-affinity-scorer", "header-based-testing-filter", "request-attribute-reporter"],
  ],
  [
    "pluggable request parsers (not built: the gateway parses OpenAI requests itself)",
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

/** llm-d type → what llmd lacks to run it ("<feature> (not built[: what it needs])"). */
export const PLANNED_PLUGINS: ReadonlyMap<string, string> = new Map(
  groups.flatMap(([missing, types]) => types.map((type) => [type, missing] as const)),
);
