/**
 * `prefix-cache-affinity-filter` (llm-d's current default recipe; reference §2.4): keeps the
 * endpoints whose prefix match is strong enough, unless none is, or sticking would cost more
 * TTFT than `maxTTFTPenaltyMs` over the best non-sticky endpoint, or an exploration draw hits.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { matchRatio, readPrefixMatch } from "../../../kv-index/index.ts";
import { attributeKey, IN_FLIGHT_LOAD, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import type { Filter, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { inFlightStateKey, readEndpointLoad } from "../shared/inflight-load.ts";

const parameters = z
  .strictObject({
    affinityThreshold: z.number().min(0).max(1).default(0.8),
    explorationProbability: z.number().min(0).max(1).default(0),
    maxTTFTPenaltyMs: z.number().nonnegative().default(18000),
    ttftSource: z.enum(["prefillThroughput", "latencyPredictor"]).default("prefillThroughput"),
    peakPrefillThroughput: z.number().positive().default(15928),
    prefixMatchInfoProducerName: z.string().min(1).default("approx-prefix-cache-producer"),
    inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
  })
  .prefault({});

/** Validated parameters of `prefix-cache-affinity-filter`. */
export type PrefixAffinityParams = z.infer<typeof parameters>;

/** The filter instance; `random` is a uniform [0,1) source (exploration draws). */
export class PrefixCacheAffinityFilter implements Filter {
  readonly type = "prefix-cache-affinity-filter";
  private readonly prefixKey: string;
  private readonly loadKey: string;

  constructor(
    readonly name: string,
    private readonly params: PrefixAffinityParams,
    private readonly random: () => number,
  ) {
    this.prefixKey = attributeKey(PREFIX_CACHE_MATCH_INFO, params.prefixMatchInfoProducerName);
    this.loadKey = inFlightStateKey(params.inFlightLoadProducerName);
  }

  filter(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    const match = readPrefixMatch(ctx.state, this.prefixKey);
    if (!match) return endpoints;
    const sticky = endpoints.filter(
      (e) => matchRatio(match.byEndpoint.get(e.metadata.key)) >= this.params.affinityThreshold,
    );
    if (sticky.length === 0 || sticky.length === endpoints.length) return endpoints;
    if (this.params.explorationProbability > 0 && this.random() < this.params.explorationProbability) {
      return endpoints;
    }
    return this.stickinessTooCostly(ctx, sticky, endpoints) ? endpoints : sticky;
  }

  /**
   * True when the best sticky endpoint's estimated TTFT exceeds the best non-sticky one's by more
   * than `maxTTFTPenaltyMs` (0 = always stick). Estimated TTFT = (in-flight uncached tokens + this
   * request's uncached tokens there) / peakPrefillThroughput. Counting the request's own tokens
   * (llm-d counts only the queue) credits the sticky endpoint with the prefill it saves.
   * `latencyPredictor` uses the same estimate (llmd has no latency predictor).
   */
  private stickinessTooCostly(
    ctx: SchedulingContext,
    sticky: readonly Endpoint[],
    endpoints: readonly Endpoint[],
  ): boolean {
    const penalty = this.params.maxTTFTPenaltyMs;
    if (penalty === 0) return false;
    let bestSticky = Number.POSITIVE_INFINITY;
    let bestOther = Number.POSITIVE_INFINITY;
    for (const e of endpoints) {
      const ttft = this.estimatedTtftMs(ctx, e);
      if (sticky.includes(e)) bestSticky = Math.min(bestSticky, ttft);
      else bestOther = Math.min(bestOther, ttft);
    }
    return bestSticky - bestOther > penalty;
  }

  private estimatedTtftMs(ctx: SchedulingContext, endpoint: Endpoint): number {
    const load = readEndpointLoad(ctx.state, this.loadKey, endpoint.metadata.key);
    return ((load.tokens + load.requestUncachedTokens) / this.params.peakPrefillThroughput) * 1000;
  }
}

/** Registry entry for `prefix-cache-affinity-filter`. */
export const definition: PluginDefinition<PrefixAffinityParams> = {
  type: "prefix-cache-affinity-filter",
  stability: "beta",
  description: "Keeps endpoints with a strong prefix match unless that costs too much TTFT (else all)",
  parameters,
  consumes: [PREFIX_CACHE_MATCH_INFO, IN_FLIGHT_LOAD],
  create: (params, env) => new PrefixCacheAffinityFilter(env.name, params, env.random ?? Math.random),
};
