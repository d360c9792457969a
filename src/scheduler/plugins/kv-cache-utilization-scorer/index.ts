/** `kv-cache-utilization-scorer`: more free KV cache scores higher. */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { noParameters } from "../../../plugin/params.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

class KvCacheUtilizationScorer implements Scorer {
  readonly type = "kv-cache-utilization-scorer";
  readonly category = "distribution";
  constructor(readonly name: string) {}

  score(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const out = new Float64Array(endpoints.length);
    for (let i = 0; i < out.length; i++) out[i] = 1 - endpoints[i]!.metrics.kvCacheUsagePercent;
    return out;
  }
}

/** `1 − kvCacheUsagePercent` from the last scrape (the framework clamps to [0,1]). */
export const definition: PluginDefinition<Record<string, never>> = {
  type: "kv-cache-utilization-scorer",
  stability: "beta",
  description: "Scores 1 − KV-cache utilisation",
  parameters: noParameters,
  create: (_params, env) => new KvCacheUtilizationScorer(env.name),
};
