/**
 * `probabilistic-admitter`: sheds sheddable (priority < 0) requests with probability
 * p = min(sat^power · k, 1), where sat is the mean endpoint utilization (as the utilization
 * detector computes it). With defaults (power 5, k 300) shedding reaches 100% near sat ≈ 0.32.
 * Non-sheddable requests are always admitted.
 */
import { LlmdError } from "../../api/errors.ts";
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type { SchedulingContext } from "../../scheduler/framework/types.ts";
import type { Plugin } from "../../plugin/types.ts";
import { poolUtilization } from "./utilization-detector.ts";

/**
 * An admission plugin (llm-d extension point "Admission"): undefined admits, an error denies.
 * Declared here, next to its one implementation, rather than in the scheduling framework.
 */
export interface Admitter extends Plugin {
  admit(ctx: SchedulingContext, endpoints: readonly Endpoint[]): LlmdError | undefined;
}

/** Parameters (llm-d names and defaults; staleness in ms). */
export interface ProbabilisticAdmitterParams {
  queueDepthThreshold: number;
  kvCacheUtilThreshold: number;
  power: number;
  k: number;
  metricsStalenessThreshold: number;
}

/** Shedding probability in [0, 1] for a sheddable request at pool utilization `saturation`. */
export function shedProbability(saturation: number, power: number, k: number): number {
  return Math.min(saturation ** power * k, 1);
}

/** Builds a `probabilistic-admitter`; `random` returns uniform [0, 1) (seedable for simulation). */
export function probabilisticAdmitter(
  params: ProbabilisticAdmitterParams,
  name = "probabilistic-admitter",
  random: () => number = Math.random,
): Admitter {
  return {
    type: "probabilistic-admitter",
    name,
    admit(ctx: SchedulingContext, endpoints: readonly Endpoint[]): LlmdError | undefined {
      if (ctx.request.priority >= 0) return undefined;
      const saturation = poolUtilization(endpoints, ctx.clock.now(), params);
      if (random() >= shedProbability(saturation, params.power, params.k)) return undefined;
      return new LlmdError("shed", "sheddable request shed: the pool is saturated", {
        retryAfterSeconds: 1,
      });
    },
  };
}
