/** `utilization-filter` (alpha): drops endpoints over any configured load cap. */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { attributeKey, IN_FLIGHT_LOAD, type InFlightLoad } from "../../framework/data-keys.ts";
import { nonNegativeNumber } from "../../../plugin/params.ts";
import type { Filter, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

const METRICS = ["active-requests", "running-requests", "waiting-queue", "kv-cache-utilization"] as const;
type Metric = (typeof METRICS)[number];

const parameters = z.strictObject({
  conditions: z.array(z.strictObject({ metric: z.enum(METRICS), maxValue: nonNegativeNumber() })).min(1),
  fallbackOnEmpty: z.boolean().default(false),
  inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
});

/** Parsed parameters: an endpoint is kept when every `metric ≤ maxValue`. */
export type UtilizationFilterParams = z.output<typeof parameters>;

function metricValue(
  e: Endpoint,
  metric: Metric,
  inFlight: ReadonlyMap<string, InFlightLoad> | undefined,
): number {
  switch (metric) {
    case "active-requests":
      return inFlight?.get(e.metadata.key)?.requests ?? 0;
    case "running-requests":
      return e.metrics.runningRequestsSize;
    case "waiting-queue":
      return e.metrics.waitingQueueSize;
    case "kv-cache-utilization":
      return e.metrics.kvCacheUsagePercent;
  }
}

class UtilizationFilter implements Filter {
  readonly type = "utilization-filter";
  private readonly inFlightKey: string;

  constructor(
    readonly name: string,
    private readonly params: UtilizationFilterParams,
  ) {
    this.inFlightKey = attributeKey(IN_FLIGHT_LOAD, params.inFlightLoadProducerName);
  }

  filter(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    const snapshot = ctx.state.get(this.inFlightKey);
    const inFlight = snapshot instanceof Map ? (snapshot as ReadonlyMap<string, InFlightLoad>) : undefined;
    const kept = endpoints.filter((e) =>
      this.params.conditions.every((c) => metricValue(e, c.metric, inFlight) <= c.maxValue),
    );
    return kept.length === 0 && this.params.fallbackOnEmpty ? endpoints : kept;
  }
}

/** Keeps endpoints with every condition's metric ≤ maxValue; none left → all if `fallbackOnEmpty`. */
export const definition: PluginDefinition<UtilizationFilterParams> = {
  type: "utilization-filter",
  stability: "alpha",
  description: "Drops endpoints over any cap (active/running requests, waiting queue, KV utilisation)",
  parameters,
  aliases: ["active-request-filter"],
  consumes: [IN_FLIGHT_LOAD],
  create: (params, env) => new UtilizationFilter(env.name, params),
};
