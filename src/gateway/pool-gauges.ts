/**
 * Gauges computed when `/metrics` is scraped (never on the request path): pool averages and each
 * endpoint's waiting queue in llm-d's names, and llmd's in-flight accounting check.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { InflightTracker } from "./inflight.ts";

/** What the metrics read from the endpoint pool at scrape time. */
export interface PoolMetricsView {
  /** Ready endpoints. */
  candidates(): readonly Endpoint[];
  /** Pool counters; `pollErrorsTotal` feeds `datalayer_poll_errors_total` (absent = not exported). */
  counters?(): { readonly pollErrorsTotal: number };
}

function average(endpoints: readonly Endpoint[], pick: (e: Endpoint) => number): number {
  if (endpoints.length === 0) return 0;
  let sum = 0;
  for (const e of endpoints) sum += pick(e);
  return sum / endpoints.length;
}

/**
 * Pool gauges (`average_*`, `ready_endpoints`, `per_endpoint_queue_size`,
 * `datalayer_poll_errors_total`), read at scrape.
 */
export function registerPoolGauges(registry: Registry, pool: PoolMetricsView, poolName: string): void {
  const gauge = (name: string, help: string, value: (eps: readonly Endpoint[]) => number): void => {
    new Gauge({
      name: `llm_d_epp_${name}`,
      help,
      labelNames: ["name"],
      registers: [registry],
      collect() {
        this.set({ name: poolName }, value(pool.candidates()));
      },
    });
  };
  gauge("average_kv_cache_utilization", "Mean KV-cache usage (0-1) of ready endpoints", (eps) =>
    average(eps, (e) => e.metrics.kvCacheUsagePercent),
  );
  gauge("average_queue_size", "Mean waiting queue of ready endpoints", (eps) =>
    average(eps, (e) => e.metrics.waitingQueueSize),
  );
  gauge("average_running_requests", "Mean running requests of ready endpoints", (eps) =>
    average(eps, (e) => e.metrics.runningRequestsSize),
  );
  gauge("ready_endpoints", "Ready endpoints", (eps) => eps.length);
  new Gauge({
    name: "llm_d_epp_per_endpoint_queue_size",
    help: "Waiting queue of each ready endpoint at its last scrape",
    labelNames: ["name", "endpoint"],
    registers: [registry],
    collect() {
      this.reset();
      for (const e of pool.candidates()) {
        this.set({ name: poolName, endpoint: e.metadata.key }, e.metrics.waitingQueueSize);
      }
    },
  });
  if (!pool.counters) return;
  const pollErrors = () => pool.counters?.().pollErrorsTotal ?? 0;
  let reported = 0;
  new Counter({
    name: "llm_d_epp_datalayer_poll_errors_total",
    help: "Failed endpoint metric scrapes",
    registers: [registry],
    collect() {
      const now = pollErrors();
      if (now > reported) this.inc(now - reported);
      reported = now;
    },
  });
}

/** `llmd_inflight_requests` and `llmd_inflight_drift`, read at scrape. */
export function registerInflightGauges(
  registry: Registry,
  pool: PoolMetricsView,
  inflight: InflightTracker,
): void {
  new Gauge({
    name: "llmd_inflight_requests",
    help: "Requests the router has dispatched and not yet seen complete",
    registers: [registry],
    collect() {
      this.set(inflight.total());
    },
  });
  new Gauge({
    name: "llmd_inflight_drift",
    help: "Router in-flight minus the servers' reported running+waiting (last scrape)",
    registers: [registry],
    collect() {
      let reported = 0;
      for (const e of pool.candidates())
        reported += e.metrics.runningRequestsSize + e.metrics.waitingQueueSize;
      this.set(inflight.total() - reported);
    },
  });
}
