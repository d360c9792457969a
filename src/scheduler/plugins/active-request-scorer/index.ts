/**
 * `active-request-scorer`: prefers endpoints with fewer requests this router has in flight
 * (from `inflight-load-producer`; reference §2.4). Always current, unlike scraped queues.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { IN_FLIGHT_LOAD } from "../../framework/data-keys.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { inFlightStateKey, readEndpointLoad } from "../shared/inflight-load.ts";

const parameters = z
  .strictObject({
    idleThreshold: z.int().nonnegative().default(0),
    maxBusyScore: z.number().min(0).max(1).default(1),
    /** Deprecated and ignored: request lifetimes come from the in-flight producer. */
    requestTimeout: z.string().optional(),
    inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
  })
  .prefault({});

/** Validated parameters of `active-request-scorer`. */
export type ActiveRequestScorerParams = z.infer<typeof parameters>;

/**
 * `count ≤ idleThreshold` → 1; otherwise `maxBusyScore · (maxCount − count) / maxCount`, where
 * `maxCount` is the largest count among the candidates (the busiest scores 0).
 */
class ActiveRequestScorer implements Scorer {
  readonly type = "active-request-scorer";
  readonly category = "distribution";
  private readonly stateKey: string;

  constructor(
    readonly name: string,
    private readonly params: ActiveRequestScorerParams,
  ) {
    this.stateKey = inFlightStateKey(params.inFlightLoadProducerName);
  }

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const counts = new Float64Array(endpoints.length);
    let maxCount = 0;
    for (let i = 0; i < endpoints.length; i++) {
      counts[i] = readEndpointLoad(ctx.state, this.stateKey, endpoints[i]!.metadata.key).requests;
      maxCount = Math.max(maxCount, counts[i]!);
    }
    const { idleThreshold, maxBusyScore } = this.params;
    for (let i = 0; i < counts.length; i++) {
      const count = counts[i]!;
      counts[i] = count <= idleThreshold ? 1 : (maxBusyScore * (maxCount - count)) / maxCount;
    }
    return counts;
  }
}

/** Registry entry for `active-request-scorer`. */
export const definition: PluginDefinition<ActiveRequestScorerParams> = {
  type: "active-request-scorer",
  stability: "beta",
  description: "Scores endpoints by requests in flight from this router (idle → 1, busiest → 0)",
  parameters,
  consumes: [IN_FLIGHT_LOAD],
  create: (params, env) => new ActiveRequestScorer(env.name, params),
};
