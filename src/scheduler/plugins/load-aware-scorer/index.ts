/** `load-aware-scorer`: llm-d's waiting-queue scorer with a fixed threshold (reference §2.4). */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

const parameters = z.strictObject({ threshold: z.int().positive().default(128) }).prefault({});

/** Validated parameters of `load-aware-scorer`. */
export type LoadAwareScorerParams = z.infer<typeof parameters>;

/**
 * Empty queue → 0.5; `q ≥ threshold` → 0; else `0.5·(1 − q/threshold)`. The maximum is 0.5 by
 * llm-d's design. `q` is the scraped waiting queue (as llm-d reads it).
 */
export function loadAwareScore(waiting: number, threshold: number): number {
  if (waiting <= 0) return 0.5;
  if (waiting >= threshold) return 0;
  return 0.5 * (1 - waiting / threshold);
}

class LoadAwareScorer implements Scorer {
  readonly type = "load-aware-scorer";
  readonly category = "distribution";

  constructor(
    readonly name: string,
    private readonly threshold: number,
  ) {}

  score(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const scores = new Float64Array(endpoints.length);
    for (let i = 0; i < endpoints.length; i++) {
      scores[i] = loadAwareScore(endpoints[i]!.metrics.waitingQueueSize, this.threshold);
    }
    return scores;
  }
}

/** Registry entry for `load-aware-scorer`. */
export const definition: PluginDefinition<LoadAwareScorerParams> = {
  type: "load-aware-scorer",
  stability: "beta",
  description: "Scores 0.5 for an empty waiting queue, falling linearly to 0 at `threshold`",
  parameters,
  create: (params, env) => new LoadAwareScorer(env.name, params.threshold),
};
