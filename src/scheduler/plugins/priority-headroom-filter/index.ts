/**
 * `priority-headroom-filter` (llmd extension): for latency-critical requests (priority ≥
 * `minPriority`) keeps only endpoints whose router-side in-flight load leaves headroom, so a short
 * high-priority prompt is not pinned (e.g. by prefix affinity, which runs after it) to a replica
 * whose batch steps are long. A step's duration grows with the sequences it decodes and the prefill
 * tokens it computes, so headroom is: in-flight requests ≤ `maxInFlightRequests` and in-flight
 * uncached prompt tokens plus this request's own there ≤ `maxInFlightTokens`. Lower priorities pass
 * untouched. When no endpoint has headroom, the ones closest to it pass: the least pressure, where
 * pressure = max(requests / maxInFlightRequests, tokens / maxInFlightTokens), so the request still
 * avoids the replicas whose steps are longest (ties pass together; the next plugins decide).
 *
 * Two options keep high and lower priorities on separate replicas, so a chat replica's steps stay
 * short (both count high-priority requests in flight themselves, from `preRequest` to the
 * response's end). `packHighPriority`: among the endpoints that pass, a high-priority request keeps
 * those already serving high priority, so chat fills its replicas up to the caps before it opens
 * another one. `shieldMaxInFlightRequests`: a request below `minPriority` skips an endpoint with any
 * high-priority request in flight once its in-flight requests would exceed the cap; when that skips
 * every endpoint, the ones with the fewest high-priority requests in flight pass. Without them a
 * burst of agent work whose first request lands on a quiet chat replica follows prefix affinity
 * there and lengthens every step chat shares.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { IN_FLIGHT_LOAD } from "../../framework/data-keys.ts";
import type {
  Filter,
  PreRequest,
  ResponseHooks,
  SchedulingContext,
  SchedulingResult,
} from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { chosenEndpoints } from "../shared/chosen-endpoints.ts";
import { inFlightStateKey, readEndpointLoad } from "../shared/inflight-load.ts";

const parameters = z
  .strictObject({
    minPriority: z.number().default(1),
    maxInFlightRequests: z.int().nonnegative().default(64),
    maxInFlightTokens: z.int().nonnegative().default(6144),
    inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
    shieldMaxInFlightRequests: z.int().nonnegative().optional(),
    packHighPriority: z.boolean().default(false),
  })
  .prefault({});

/** Validated parameters of `priority-headroom-filter`. */
export type PriorityHeadroomParams = z.infer<typeof parameters>;

class PriorityHeadroomFilter implements Filter, PreRequest, ResponseHooks {
  readonly type = "priority-headroom-filter";
  private readonly loadKey: string;
  private readonly ledgerKey: string;
  /** Endpoint key → high-priority requests in flight there (tracked only when packing or shielding). */
  private readonly highPriorityInFlight = new Map<string, number>();
  private readonly tracking: boolean;

  constructor(
    readonly name: string,
    private readonly params: PriorityHeadroomParams,
  ) {
    this.loadKey = inFlightStateKey(params.inFlightLoadProducerName);
    this.ledgerKey = `${name}/high-priority-endpoints`;
    this.tracking = params.packHighPriority || params.shieldMaxInFlightRequests !== undefined;
  }

  filter(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    if (endpoints.length === 0) return endpoints;
    if (ctx.request.priority < this.params.minPriority) return this.shielded(ctx, endpoints);
    const pressures = endpoints.map((e) => this.pressure(ctx, e));
    const limit = Math.max(1, Math.min(...pressures));
    const kept = endpoints.filter((_, i) => pressures[i]! <= limit);
    if (!this.params.packHighPriority) return kept;
    const serving = kept.filter((e) => this.highPriorityOn(e) > 0);
    return serving.length > 0 ? serving : kept;
  }

  private shielded(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    const cap = this.params.shieldMaxInFlightRequests;
    if (cap === undefined) return endpoints;
    const highs = endpoints.map((e) => this.highPriorityOn(e));
    const open = endpoints.filter(
      (e, i) => highs[i] === 0 || readEndpointLoad(ctx.state, this.loadKey, e.metadata.key).requests < cap,
    );
    if (open.length > 0) return open;
    const fewest = Math.min(...highs);
    return endpoints.filter((_, i) => highs[i] === fewest);
  }

  private highPriorityOn(endpoint: Endpoint): number {
    return this.highPriorityInFlight.get(endpoint.metadata.key) ?? 0;
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    if (!this.tracking || ctx.request.priority < this.params.minPriority || ctx.state.has(this.ledgerKey))
      return;
    const keys = chosenEndpoints(result).map((e) => e.metadata.key);
    for (const key of keys) this.highPriorityInFlight.set(key, (this.highPriorityInFlight.get(key) ?? 0) + 1);
    ctx.state.set(this.ledgerKey, keys);
  }

  onResponseComplete(ctx: SchedulingContext): void {
    const keys = ctx.state.get(this.ledgerKey) as string[] | undefined;
    if (!keys) return;
    ctx.state.delete(this.ledgerKey);
    for (const key of keys) {
      const left = (this.highPriorityInFlight.get(key) ?? 1) - 1;
      if (left > 0) this.highPriorityInFlight.set(key, left);
      else this.highPriorityInFlight.delete(key);
    }
  }

  /** Load relative to the caps: ≤ 1 = headroom. */
  private pressure(ctx: SchedulingContext, endpoint: Endpoint): number {
    const load = readEndpointLoad(ctx.state, this.loadKey, endpoint.metadata.key);
    const { maxInFlightRequests, maxInFlightTokens } = this.params;
    return Math.max(
      ratio(load.requests, maxInFlightRequests),
      ratio(load.tokens + load.requestUncachedTokens, maxInFlightTokens),
    );
  }
}

/** `load / cap`, where a zero cap admits only zero load. */
function ratio(load: number, cap: number): number {
  if (cap > 0) return load / cap;
  return load > 0 ? Number.POSITIVE_INFINITY : 0;
}

/** Registry entry for `priority-headroom-filter`. */
export const definition: PluginDefinition<PriorityHeadroomParams> = {
  type: "priority-headroom-filter",
  stability: "alpha",
  description:
    "For priority ≥ minPriority keeps endpoints with few in-flight requests and uncached tokens (else the least loaded)",
  parameters,
  consumes: [IN_FLIGHT_LOAD],
  create: (params, env) => new PriorityHeadroomFilter(env.name, params),
};
