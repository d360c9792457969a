/**
 * `response-chain-scorer` (llmd): a Responses turn chained by `previous_response_id` scores 1 on
 * the endpoint that served the previous turn, which holds the KV cache of the whole history, when
 * this router's own prefix index knows nothing of the prompt (another router served the chain, or
 * this one restarted) and that endpoint is not saturated. Where the index does know the prompt,
 * prefix and load scoring already weigh the cached history against load, and the scorer stays out
 * of the way: every endpoint scores 0, as for requests that continue no chain.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { readPrefixMatch } from "../../../kv-index/index.ts";
import {
  attributeKey,
  PREFIX_CACHE_MATCH_INFO,
  PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE,
} from "../../framework/data-keys.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";

const parameters = z
  .strictObject({
    /** Waiting requests (last scrape + dispatched since) at which the previous endpoint is saturated. */
    maxWaitingQueue: z.number().int().positive().default(5),
    /** KV-cache usage in [0, 1] at which the previous endpoint is saturated. */
    maxKvCacheUsage: z.number().gt(0).max(1).default(0.95),
    /** The prefix index knows the prompt when some endpoint holds at least this share of it. */
    knownPrefixRatio: z.number().gt(0).max(1).default(0.5),
    prefixMatchInfoProducerName: z.string().min(1).default("approx-prefix-cache-producer"),
  })
  .prefault({});

/** Validated parameters of `response-chain-scorer`. */
export type ResponseChainScorerParams = z.infer<typeof parameters>;

class ResponseChainScorer implements Scorer {
  readonly type = "response-chain-scorer";
  readonly category = "affinity";

  private readonly prefixMatchStateKey: string;

  constructor(
    readonly name: string,
    private readonly params: ResponseChainScorerParams,
  ) {
    this.prefixMatchStateKey = attributeKey(PREFIX_CACHE_MATCH_INFO, params.prefixMatchInfoProducerName);
  }

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const out = new Float64Array(endpoints.length);
    const previous = ctx.request.attributes.get(PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE);
    if (typeof previous !== "string" || this.prefixKnown(ctx, endpoints)) return out;
    const i = endpoints.findIndex((e) => e.metadata.key === previous);
    if (i >= 0 && !this.saturated(endpoints[i]!)) out[i] = 1;
    return out;
  }

  /** Whether the router's prefix index already places the prompt on some endpoint. */
  private prefixKnown(ctx: SchedulingContext, endpoints: readonly Endpoint[]): boolean {
    const match = readPrefixMatch(ctx.state, this.prefixMatchStateKey);
    if (!match) return false;
    for (const endpoint of endpoints) {
      const info = match.byEndpoint.get(endpoint.metadata.key);
      if (info && info.totalBlocks > 0 && info.matchBlocks >= this.params.knownPrefixRatio * info.totalBlocks)
        return true;
    }
    return false;
  }

  private saturated(endpoint: Endpoint): boolean {
    const m = endpoint.metrics;
    return (
      m.waitingQueueSize + m.dispatchedSinceScrape >= this.params.maxWaitingQueue ||
      m.kvCacheUsagePercent >= this.params.maxKvCacheUsage
    );
  }
}

/** Prefers the previous turn's endpoint of a Responses chain while it has headroom. */
export const definition: PluginDefinition<ResponseChainScorerParams> = {
  type: "response-chain-scorer",
  stability: "beta",
  description: "Responses chains: 1 on the endpoint that served the previous turn, unless it is saturated",
  parameters,
  consumes: [PREFIX_CACHE_MATCH_INFO],
  create: (params, env) => new ResponseChainScorer(env.name, params),
};
