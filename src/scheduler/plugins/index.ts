/**
 * The built-in scheduling plugins: one list, loaded into a PluginRegistry by the config layer
 * (src/config/registry.ts). Nothing registers itself on import.
 *
 * Convention for a plugin folder src/scheduler/plugins/<type>/:
 *   index.ts    `export const definition: PluginDefinition<Params> = { type: "<type>", stability, description,
 *               parameters: <zod strict object>, create(params, env) { … }, produces?, consumes? }`
 *   index.test.ts  its llm-d semantics;  README.md  5–15 lines.
 * Add it here as `import { definition as camelCaseType } from "./<type>/index.ts";` and list it below.
 * Data keys and attribute shapes shared between producers and consumers: ../framework/data-keys.ts.
 * Test helpers (endpoints, contexts, envs): ../framework/testing.ts.
 */
import type { AnyPluginDefinition } from "../../plugin/registry.ts";
import { definition as activeRequestScorer } from "./active-request-scorer/index.ts";
import { definition as agentIdentity } from "./agent-identity/index.ts";
import { definition as alwaysDisaggMultimodalDecider } from "./always-disagg-multimodal-decider/index.ts";
import { definition as alwaysDisaggPdDecider } from "./always-disagg-pd-decider/index.ts";
import { definition as approxPrefixCacheProducer } from "./approx-prefix-cache-producer/index.ts";
import { definition as burstPrefixCacheProducer } from "./burst-prefix-cache-producer/index.ts";
import { definition as dataParallelProfileHandler } from "./data-parallel-profile-handler/index.ts";
import { definition as decodeFilter } from "./decode-filter/index.ts";
import { definition as disaggProfileHandler } from "./disagg-profile-handler/index.ts";
import { definition as disaggregatedsetRolloutScreener } from "./disaggregatedset-rollout-screener/index.ts";
import { definition as encodeFilter } from "./encode-filter/index.ts";
import { definition as endpointAttributeFilter } from "./endpoint-attribute-filter/index.ts";
import { definition as endpointAttributeScorer } from "./endpoint-attribute-scorer/index.ts";
import { definition as inflightLoadProducer } from "./inflight-load-producer/index.ts";
import { definition as kvCacheUtilizationScorer } from "./kv-cache-utilization-scorer/index.ts";
import { definition as labelSelectorFilter } from "./label-selector-filter/index.ts";
import { definition as loadAwareScorer } from "./load-aware-scorer/index.ts";
import { definition as loraAffinityScorer } from "./lora-affinity-scorer/index.ts";
import { definition as maxScorePicker } from "./max-score-picker/index.ts";
import { definition as mmEmbeddingsCacheProducer } from "./mm-embeddings-cache-producer/index.ts";
import { definition as mmEmbeddingsCacheScorer } from "./mm-embeddings-cache-scorer/index.ts";
import { definition as noHitLruScorer } from "./no-hit-lru-scorer/index.ts";
import { definition as prefillFilter } from "./prefill-filter/index.ts";
import { definition as prefixBasedPdDecider } from "./prefix-based-pd-decider/index.ts";
import { definition as prefixCacheAffinityFilter } from "./prefix-cache-affinity-filter/index.ts";
import { definition as prefixCacheScorer } from "./prefix-cache-scorer/index.ts";
import { definition as precisePrefixCacheProducer } from "./precise-prefix-cache-producer/index.ts";
import { definition as precisePrefixCacheScorer } from "./precise-prefix-cache-scorer/index.ts";
import { definition as priorityHeadroomFilter } from "./priority-headroom-filter/index.ts";
import { definition as queueScorer } from "./queue-scorer/index.ts";
import { definition as randomPicker } from "./random-picker/index.ts";
import { definition as responseChainScorer } from "./response-chain-scorer/index.ts";
import { definition as roundRobinPicker } from "./round-robin-picker/index.ts";
import { definition as runningRequestsSizeScorer } from "./running-requests-size-scorer/index.ts";
import { definition as sessionAffinityFilter } from "./session-affinity-filter/index.ts";
import { definition as sessionAffinityScorer } from "./session-affinity-scorer/index.ts";
import { definition as sessionIdProducer } from "./session-id-producer/index.ts";
import { definition as sessionStateProducer } from "./session-state-producer/index.ts";
import { definition as singleProfileHandler } from "./single-profile-handler/index.ts";
import { definition as stagedPrefill } from "./staged-prefill/index.ts";
import { definition as tokenLoadScorer } from "./token-load-scorer/index.ts";
import { definition as tokenProducer } from "./token-producer/index.ts";
import { definition as topologyAffinityFilter } from "./topology-affinity-filter/index.ts";
import { definition as topologyAffinityScorer } from "./topology-affinity-scorer/index.ts";
import { definition as topologyExtractor } from "./topology-extractor/index.ts";
import { definition as utilizationFilter } from "./utilization-filter/index.ts";
import { definition as weightedRandomPicker } from "./weighted-random-picker/index.ts";

/** Every built-in scheduling plugin definition (order is irrelevant; `llmd plugins` sorts by type). */
export const schedulingPlugins: readonly AnyPluginDefinition[] = [
  activeRequestScorer,
  agentIdentity,
  alwaysDisaggMultimodalDecider,
  alwaysDisaggPdDecider,
  approxPrefixCacheProducer,
  burstPrefixCacheProducer,
  dataParallelProfileHandler,
  decodeFilter,
  disaggProfileHandler,
  disaggregatedsetRolloutScreener,
  encodeFilter,
  endpointAttributeFilter,
  endpointAttributeScorer,
  inflightLoadProducer,
  kvCacheUtilizationScorer,
  labelSelectorFilter,
  loadAwareScorer,
  loraAffinityScorer,
  maxScorePicker,
  mmEmbeddingsCacheProducer,
  mmEmbeddingsCacheScorer,
  noHitLruScorer,
  prefillFilter,
  prefixBasedPdDecider,
  prefixCacheAffinityFilter,
  prefixCacheScorer,
  precisePrefixCacheProducer,
  precisePrefixCacheScorer,
  priorityHeadroomFilter,
  queueScorer,
  randomPicker,
  responseChainScorer,
  roundRobinPicker,
  runningRequestsSizeScorer,
  sessionAffinityFilter,
  sessionAffinityScorer,
  sessionIdProducer,
  sessionStateProducer,
  singleProfileHandler,
  stagedPrefill,
  tokenLoadScorer,
  tokenProducer,
  topologyAffinityFilter,
  topologyAffinityScorer,
  topologyExtractor,
  utilizationFilter,
  weightedRandomPicker,
];
