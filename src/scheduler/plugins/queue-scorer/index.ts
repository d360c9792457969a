/** `queue-scorer`: shorter waiting queue scores higher, min-max normalised across candidates. */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { minMaxLowerIsBetter } from "../../framework/normalize.ts";
import { noParameters } from "../../../plugin/params.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

class QueueScorer implements Scorer {
  readonly type = "queue-scorer";
  readonly category = "distribution";
  constructor(readonly name: string) {}

  score(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    // Requests dispatched since the last scrape count as queued: without them every decision between
    // two scrapes would see the same queue and overshoot onto the same endpoint.
    const queues = endpoints.map((e) => e.metrics.waitingQueueSize + e.metrics.dispatchedSinceScrape);
    return minMaxLowerIsBetter(queues);
  }
}

/** `(maxQ − q)/(maxQ − minQ)` over waiting queue (+ dispatched since scrape); all equal → 1.0. */
export const definition: PluginDefinition<Record<string, never>> = {
  type: "queue-scorer",
  stability: "beta",
  description: "Scores shorter waiting queues higher (min-max normalised; all equal → 1)",
  parameters: noParameters,
  create: (_params, env) => new QueueScorer(env.name),
};
