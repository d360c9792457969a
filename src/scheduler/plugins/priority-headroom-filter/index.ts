/**
 * `priority-headroom-filter` (llmd extension): for latency-critical requests (priority ≥
 * `minPriority`) keeps only endpoints whose router-side in-flight load leaves headroom, so a short
 * high-priority prompt is not pinned (e.g. by prefix affinity, which runs after it) to a replica
 * whose batch steps are long. A step's duration grows with the sequences it decodes and the prefill
 * tokens it computes, so headroom is: in-flight requests ≤ `maxInFlightRequests` and in-flight
 * uncached prompt tokens plus this request's own there ≤ `maxInFlightTokens`. Lower priorities pass
 * untouched; when no endpoint has headroom, all pass (the next plugins decide).
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { IN_FLIGHT_LOAD } from "../../framework/data-keys.ts";
import type { Filter, PluginDefinition, SchedulingContext } from "../../framework/types.ts";
import { inFlightStateKey, readEndpointLoad } from "../shared/inflight-load.ts";

const parameters = z
  .strictObject({
    minPriority: z.number().default(1),
    maxInFlightRequests: z.int().nonnegative().default(64),
    maxInFlightTokens: z.int().nonnegative().default(6144),
    inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
  })
  .prefault({});

/** Validated parameters of `priority-headroom-filter`. */
export type PriorityHeadroomParams = z.infer<typeof parameters>;

class PriorityHeadroomFilter implements Filter {
  readonly type = "priority-headroom-filter";
  private readonly loadKey: string;

  constructor(
    readonly name: string,
    private readonly params: PriorityHeadroomParams,
  ) {
    this.loadKey = inFlightStateKey(params.inFlightLoadProducerName);
  }

  filter(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    if (ctx.request.priority < this.params.minPriority) return endpoints;
    const kept = endpoints.filter((e) => this.hasHeadroom(ctx, e));
    return kept.length === 0 ? endpoints : kept;
  }

  private hasHeadroom(ctx: SchedulingContext, endpoint: Endpoint): boolean {
    const load = readEndpointLoad(ctx.state, this.loadKey, endpoint.metadata.key);
    return (
      load.requests <= this.params.maxInFlightRequests &&
      load.tokens + load.requestUncachedTokens <= this.params.maxInFlightTokens
    );
  }
}

/** Registry entry for `priority-headroom-filter`. */
export const definition: PluginDefinition<PriorityHeadroomParams> = {
  type: "priority-headroom-filter",
  stability: "alpha",
  description:
    "For priority ≥ minPriority keeps endpoints with few in-flight requests and uncached tokens (else all)",
  parameters,
  consumes: [IN_FLIGHT_LOAD],
  create: (params, env) => new PriorityHeadroomFilter(env.name, params),
};
