/**
 * The gateway's Prometheus metrics under llm-d's EPP names (`llm_d_epp_*`) plus llmd's own
 * `llmd_inflight_*`. One registry per gateway (tests run several in one process). Labels stay
 * bounded: model labels are only ever models the pool serves (else `other`), endpoint labels
 * only pool members, error codes a fixed catalogue.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { ResponseUsage } from "../scheduler/framework/types.ts";
import type { InflightTracker } from "./inflight.ts";

const DURATION_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60, 120,
  180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600,
];
const TOKEN_BUCKETS = [
  1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288,
  1048576,
];
const SCHEDULER_BUCKETS = [0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1];

/** What the metrics read from the endpoint pool at scrape time. */
export interface PoolMetricsView {
  /** Ready endpoints. */
  candidates(): readonly Endpoint[];
  /** Pool counters; `pollErrorsTotal` feeds `datalayer_poll_errors_total` (absent = not exported). */
  counters?(): { readonly pollErrorsTotal: number };
}

/** Labels identifying the model of one request. */
export interface ModelLabels {
  model_name: string;
  target_model_name: string;
}

/** Registry and instruments of one gateway. */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<"model_name" | "target_model_name">;
  private readonly errors: Counter<"model_name" | "target_model_name" | "error_code">;
  private readonly running: Gauge<"model_name" | "target_model_name">;
  private readonly duration: Histogram<"model_name" | "target_model_name">;
  private readonly ttft: Histogram<"model_name" | "target_model_name" | "streaming">;
  private readonly inputTokens: Histogram<"model_name" | "target_model_name">;
  private readonly outputTokens: Histogram<"model_name" | "target_model_name">;
  private readonly cachedTokens: Histogram<"model_name" | "target_model_name">;
  private readonly schedulerE2e: Histogram;
  /** Per-plugin timings, for a framework observer to feed. */
  readonly pluginDuration: Histogram<"extension_point" | "plugin_type" | "plugin_name">;

  constructor(pool: PoolMetricsView, inflight: InflightTracker, poolName = "default") {
    const r = [this.registry];
    const modelLabels = ["model_name", "target_model_name"] as const;
    const p = "llm_d_epp_";
    this.requests = new Counter({
      name: `${p}request_total`,
      help: "Requests received",
      labelNames: modelLabels,
      registers: r,
    });
    this.errors = new Counter({
      name: `${p}request_error_total`,
      help: "Requests that failed, by error code",
      labelNames: [...modelLabels, "error_code"],
      registers: r,
    });
    this.running = new Gauge({
      name: `${p}request_running`,
      help: "Requests in flight",
      labelNames: modelLabels,
      registers: r,
    });
    const histogram = <L extends string>(
      name: string,
      help: string,
      buckets: number[],
      labelNames: readonly L[],
    ) => new Histogram<L>({ name: `${p}${name}`, help, buckets, labelNames, registers: r });
    this.duration = histogram(
      "request_duration_seconds",
      "End-to-end request latency",
      DURATION_BUCKETS,
      modelLabels,
    );
    this.ttft = histogram("request_ttft_seconds", "Time to first token", DURATION_BUCKETS, [
      ...modelLabels,
      "streaming",
    ]);
    this.inputTokens = histogram(
      "request_input_tokens",
      "Prompt tokens per request",
      TOKEN_BUCKETS,
      modelLabels,
    );
    this.outputTokens = histogram(
      "request_output_tokens",
      "Completion tokens per request",
      TOKEN_BUCKETS,
      modelLabels,
    );
    this.cachedTokens = histogram(
      "request_cached_tokens",
      "Prompt tokens served from cache",
      TOKEN_BUCKETS,
      modelLabels,
    );
    this.schedulerE2e = histogram(
      "scheduler_e2e_duration_seconds",
      "Scheduling latency",
      SCHEDULER_BUCKETS,
      [],
    );
    this.pluginDuration = histogram("plugin_duration_seconds", "Plugin latency", SCHEDULER_BUCKETS, [
      "extension_point",
      "plugin_type",
      "plugin_name",
    ]);
    registerPoolGauges(this.registry, pool, poolName);
    registerInflightGauges(this.registry, pool, inflight);
  }

  /** A request was admitted for scheduling. */
  requestStarted(labels: ModelLabels): void {
    this.requests.inc(labels);
    this.running.inc(labels);
  }

  /** A started request ended; `ttftSeconds` undefined when no byte ever arrived. */
  requestEnded(
    labels: ModelLabels,
    seconds: number,
    ttftSeconds: number | undefined,
    streaming: boolean,
  ): void {
    this.running.dec(labels);
    this.duration.observe(labels, seconds);
    if (ttftSeconds !== undefined)
      this.ttft.observe({ ...labels, streaming: String(streaming) }, ttftSeconds);
  }

  /** Token usage reported by the model server. */
  usage(labels: ModelLabels, usage: ResponseUsage): void {
    this.inputTokens.observe(labels, usage.promptTokens);
    this.outputTokens.observe(labels, usage.completionTokens);
    this.cachedTokens.observe(labels, usage.cachedTokens);
  }

  /** A request failed with `errorCode` (an `LlmdError.code` or `http_<status>` from upstream). */
  requestFailed(labels: ModelLabels, errorCode: string): void {
    this.errors.inc({ ...labels, error_code: errorCode });
  }

  /** One scheduling decision took `seconds`. */
  scheduled(seconds: number): void {
    this.schedulerE2e.observe(seconds);
  }
}

function average(endpoints: readonly Endpoint[], pick: (e: Endpoint) => number): number {
  if (endpoints.length === 0) return 0;
  let sum = 0;
  for (const e of endpoints) sum += pick(e);
  return sum / endpoints.length;
}

function registerPoolGauges(registry: Registry, pool: PoolMetricsView, poolName: string): void {
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

function registerInflightGauges(registry: Registry, pool: PoolMetricsView, inflight: InflightTracker): void {
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
