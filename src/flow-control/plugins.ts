/**
 * Registrable definitions of every flow-control plugin (llm-d type names, parameters and defaults),
 * as one list for the config loader's registry. Durations in parameters accept Go strings ("200ms").
 */
import { z } from "zod";
import type { Plugin, PluginDefinition } from "../plugin/types.ts";
import { durationMsSchema } from "../core/units.ts";
import { priorityThenTimeEvictionOrder, sheddableEvictionFilter } from "./eviction.ts";
import { concurrencyDetector } from "./policies/concurrency-detector.ts";
import { globalStrictFairness, roundRobinFairness } from "./policies/fairness.ts";
import { edfOrdering, fcfsOrdering, sloDeadlineOrdering } from "./policies/ordering.ts";
import { probabilisticAdmitter } from "./policies/probabilistic-admitter.ts";
import { programAwareFairness } from "./policies/program-aware-fairness.ts";
import { turnPriorityOrdering } from "./policies/turn-priority-ordering.ts";
import { priorityHoldback, softReflectiveCeiling, staticUsageLimit } from "./policies/usage-limits.ts";
import { utilizationDetector } from "./policies/utilization-detector.ts";

const positive = z.number().positive();
const fraction = z.number().min(0);
const noParameters = z.strictObject({}).prefault({});

/** A parameterless definition built from a factory taking the instance name. */
function simple(
  type: string,
  stability: PluginDefinition["stability"],
  description: string,
  factory: (name: string) => Plugin,
): PluginDefinition {
  return {
    type,
    stability,
    description,
    parameters: noParameters,
    create: (_params, env) => factory(env.name),
  };
}

const programAwareParameters = z
  .strictObject({
    strategy: z.literal("las").default("las"),
    lasWeightService: fraction.default(0.8),
    lasWeightHeadWait: fraction.default(0.2),
    lasHalfLifeSeconds: fraction.default(60),
    evictionTtlSeconds: positive.default(3600),
    evictionSweepSeconds: positive.default(300),
  })
  .prefault({});

const turnPriorityParameters = z
  .strictObject({
    turnCredit: durationMsSchema.default(2000),
    maxCreditedTurns: z.number().int().min(0).default(5),
    sessionIdleTtl: durationMsSchema.default(600_000),
  })
  .prefault({});

const utilizationParameters = z
  .strictObject({
    queueDepthThreshold: positive.default(5),
    kvCacheUtilThreshold: positive.default(0.8),
    metricsStalenessThreshold: durationMsSchema.default(200),
    headroom: fraction.default(0),
  })
  .prefault({});

const concurrencyParameters = z
  .strictObject({
    concurrencyMode: z.enum(["requests", "tokens", "hybrid"]).default("requests"),
    maxConcurrency: positive.default(100),
    maxTokenConcurrency: positive.default(1_000_000),
    headroom: fraction.default(0),
  })
  .prefault({});

const holdbackParameters = z.strictObject({
  shape: z.literal("linear").default("linear"),
  domain: z.enum(["rank", "value"]).default("rank"),
  minCeiling: fraction,
  maxCeiling: fraction.default(1),
});

const admitterParameters = z
  .strictObject({
    queueDepthThreshold: positive.default(5),
    kvCacheUtilThreshold: positive.default(0.8),
    power: positive.default(5),
    k: positive.default(300),
    metricsStalenessThreshold: durationMsSchema.default(200),
  })
  .prefault({});

/** Every flow-control plugin type, for registration in a plugin registry. */
export const flowControlPlugins: readonly PluginDefinition[] = [
  simple("global-strict-fairness-policy", "ga", "fairness: one logical queue per band", globalStrictFairness),
  simple("round-robin-fairness-policy", "ga", "fairness: one dispatch per flow in turn", roundRobinFairness),
  {
    type: "program-aware-fairness",
    stability: "beta",
    description: "fairness: least attained service per program, decayed (input + 2×output tokens)",
    parameters: programAwareParameters,
    create: (params: z.output<typeof programAwareParameters>, env) => programAwareFairness(params, env.name),
  },
  simple("fcfs-ordering-policy", "ga", "ordering: first come first served", fcfsOrdering),
  simple("edf-ordering-policy", "ga", "ordering: earliest TTL deadline first", edfOrdering),
  simple(
    "slo-deadline-ordering-policy",
    "ga",
    "ordering: earliest TTFT-SLO deadline first",
    sloDeadlineOrdering,
  ),
  {
    type: "turn-priority-ordering-policy",
    stability: "alpha",
    description: "ordering: later agent turns get a bounded head start (llmd extension)",
    parameters: turnPriorityParameters,
    create: (params: z.output<typeof turnPriorityParameters>, env) =>
      turnPriorityOrdering(
        {
          turnCreditMs: params.turnCredit,
          maxCreditedTurns: params.maxCreditedTurns,
          sessionIdleTtlMs: params.sessionIdleTtl,
        },
        env.name,
      ),
  },
  {
    type: "utilization-detector",
    stability: "beta",
    description: "saturation: mean of max(queue/threshold, kv/threshold); stale = saturated",
    parameters: utilizationParameters,
    create: (params: z.output<typeof utilizationParameters>, env) => utilizationDetector(params, env.name),
  },
  {
    type: "concurrency-detector",
    stability: "beta",
    description: "saturation: router-tracked in-flight requests/tokens over capacity",
    parameters: concurrencyParameters,
    create: (params: z.output<typeof concurrencyParameters>, env) => concurrencyDetector(params, env.name),
  },
  {
    type: "static-usage-limit-policy",
    stability: "ga",
    description: "usage limit: one dispatch ceiling for every band",
    parameters: z.strictObject({ threshold: fraction.default(1) }).prefault({}),
    create: (params: { threshold: number }, env) => staticUsageLimit(params.threshold, env.name),
  },
  {
    type: "priority-holdback-policy",
    stability: "beta",
    description: "usage limit: lower bands gated at lower saturation (linear)",
    parameters: holdbackParameters,
    create: (params: z.output<typeof holdbackParameters>, env) => priorityHoldback(params, env.name),
  },
  simple(
    "soft-reflective-ceiling-policy",
    "beta",
    "usage limit: graduated ceilings, gated bands trickle",
    (name) => softReflectiveCeiling(name),
  ),
  {
    type: "probabilistic-admitter",
    stability: "beta",
    description: "admission: shed priority<0 with p = min(sat^power·k, 1)",
    parameters: admitterParameters,
    create: (params: z.output<typeof admitterParameters>, env) =>
      probabilisticAdmitter(params, env.name, env.random),
  },
  simple(
    "sheddable-eviction-filter",
    "beta",
    "eviction: only priority < 0 may be evicted",
    sheddableEvictionFilter,
  ),
  simple(
    "priority-then-time-eviction-order-policy",
    "beta",
    "eviction: lowest priority, then most recently dispatched, first",
    priorityThenTimeEvictionOrder,
  ),
];
