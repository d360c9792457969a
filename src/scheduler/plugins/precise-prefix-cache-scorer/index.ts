/**
 * `precise-prefix-cache-scorer`: llm-d's monolithic form (reference §2.4): an internal
 * `precise-prefix-cache-producer` and a score of the tier-weighted fraction of the prompt's blocks
 * each endpoint holds. llm-d recommends the producer with `prefix-cache-scorer` instead.
 */
import { matchRatio, readPrefixMatch } from "../../../kv-index/index.ts";
import type { PreRequest, SchedulingContext, SchedulingResult, Scorer } from "../../framework/types.ts";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import {
  PreciseCachePlugin,
  PrecisePrefixCache,
  type PrecisePrefixParams,
  precisePrefixParameters,
} from "../shared/precise-prefix.ts";

class PrecisePrefixCacheScorer extends PreciseCachePlugin implements Scorer, PreRequest {
  readonly type = "precise-prefix-cache-scorer";
  readonly category = "affinity";

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    this.cache.produce(ctx, endpoints);
    const match = readPrefixMatch(ctx.state, this.cache.stateKey);
    const scores = new Float64Array(endpoints.length);
    for (let i = 0; i < endpoints.length; i++)
      scores[i] = matchRatio(match?.byEndpoint.get(endpoints[i]!.metadata.key));
    return scores;
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    if (this.cache.speculativeIndexing) this.cache.preRequest(ctx, result);
  }
}

/** Registry entry for `precise-prefix-cache-scorer`. */
export const definition: PluginDefinition<PrecisePrefixParams> = {
  type: "precise-prefix-cache-scorer",
  stability: "deprecated",
  description:
    "Monolithic precise prefix scorer (an internal precise-prefix-cache-producer); use the producer with prefix-cache-scorer",
  parameters: precisePrefixParameters,
  create: (params, env) =>
    new PrecisePrefixCacheScorer(
      env.name,
      new PrecisePrefixCache(env.name, params, env.tokenizer, env.clock),
    ),
};
