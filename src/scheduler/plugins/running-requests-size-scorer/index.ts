/** `running-requests-size-scorer`: fewer running requests scores higher, min-max normalised. */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { minMaxLowerIsBetter } from "../../framework/normalize.ts";
import { noParameters } from "../../../plugin/params.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

class RunningRequestsSizeScorer implements Scorer {
  readonly type = "running-requests-size-scorer";
  readonly category = "distribution";
  constructor(readonly name: string) {}

  score(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    return minMaxLowerIsBetter(endpoints.map((e) => e.metrics.runningRequestsSize));
  }
}

/** `(maxR − r)/(maxR − minR)` over running requests from the last scrape; all equal → 1.0. */
export const definition: PluginDefinition<Record<string, never>> = {
  type: "running-requests-size-scorer",
  stability: "beta",
  description: "Scores fewer running requests higher (min-max normalised; all equal → 1)",
  parameters: noParameters,
  create: (_params, env) => new RunningRequestsSizeScorer(env.name),
};
