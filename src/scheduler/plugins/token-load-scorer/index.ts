/**
 * `token-load-scorer`: prefers endpoints with fewer uncached prompt tokens in flight (reference
 * §2.4), counting this request's own uncached tokens on each endpoint as llm-d does.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { IN_FLIGHT_LOAD } from "../../framework/data-keys.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { inFlightStateKey, readEndpointLoad } from "../shared/inflight-load.ts";

const parameters = z
  .strictObject({
    queueThresholdTokens: z.int().positive().default(4194304),
    inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
  })
  .prefault({});

/** Validated parameters of `token-load-scorer`. */
export type TokenLoadScorerParams = z.infer<typeof parameters>;

/** Score = `1 − min(1, (inFlightTokens + requestUncachedTokens) / queueThresholdTokens)`. */
class TokenLoadScorer implements Scorer {
  readonly type = "token-load-scorer";
  readonly category = "distribution";
  private readonly stateKey: string;

  constructor(
    readonly name: string,
    private readonly threshold: number,
    producerName: string,
  ) {
    this.stateKey = inFlightStateKey(producerName);
  }

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const scores = new Float64Array(endpoints.length);
    for (let i = 0; i < endpoints.length; i++) {
      const load = readEndpointLoad(ctx.state, this.stateKey, endpoints[i]!.metadata.key);
      scores[i] = 1 - Math.min(1, (load.tokens + load.requestUncachedTokens) / this.threshold);
    }
    return scores;
  }
}

/** Registry entry for `token-load-scorer`. */
export const definition: PluginDefinition<TokenLoadScorerParams> = {
  type: "token-load-scorer",
  stability: "beta",
  description: "Scores endpoints by uncached prompt tokens in flight (1 − tokens/queueThresholdTokens)",
  parameters,
  consumes: [IN_FLIGHT_LOAD],
  create: (p, env) => new TokenLoadScorer(env.name, p.queueThresholdTokens, p.inFlightLoadProducerName),
};
