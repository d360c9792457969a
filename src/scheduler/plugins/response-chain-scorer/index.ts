/**
 * `response-chain-scorer` (llmd): a Responses turn chained by `previous_response_id` scores 1 on
 * the endpoint that served the previous turn, which holds the KV cache of the whole history, unless
 * that endpoint looks saturated (waiting queue or KV usage at its limit); then, and for requests
 * that continue no chain, every endpoint scores 0 and the other scorers decide.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE } from "../../framework/data-keys.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";

const parameters = z
  .strictObject({
    /** Waiting requests (last scrape + dispatched since) at which the previous endpoint is saturated. */
    maxWaitingQueue: z.number().int().positive().default(5),
    /** KV-cache usage in [0, 1] at which the previous endpoint is saturated. */
    maxKvCacheUsage: z.number().gt(0).max(1).default(0.95),
  })
  .prefault({});

/** Validated parameters of `response-chain-scorer`. */
export type ResponseChainScorerParams = z.infer<typeof parameters>;

class ResponseChainScorer implements Scorer {
  readonly type = "response-chain-scorer";
  readonly category = "affinity";

  constructor(
    readonly name: string,
    private readonly params: ResponseChainScorerParams,
  ) {}

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const out = new Float64Array(endpoints.length);
    const previous = ctx.request.attributes.get(PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE);
    if (typeof previous !== "string") return out;
    const i = endpoints.findIndex((e) => e.metadata.key === previous);
    if (i >= 0 && !this.saturated(endpoints[i]!)) out[i] = 1;
    return out;
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
  create: (params, env) => new ResponseChainScorer(env.name, params),
};
