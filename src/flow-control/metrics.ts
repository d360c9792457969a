/**
 * Prometheus export of flow control under llm-d's names (`llm_d_epp_flow_control_*`), kept out of
 * the pure core: counters and histograms are fed by the controller's observer events, gauges read
 * `stats()` at scrape time. Labels stay bounded: `fairness_id` takes at most `maxFairnessIds`
 * distinct values (later ones report as `other`), `priority` is the band, `outcome` a fixed set.
 */
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { FlowControlStats, FlowObserver } from "./observer.ts";
import type { FlowExit } from "./types.ts";

/** Construction inputs of {@link FlowControlMetrics}. */
export interface FlowControlMetricsOptions {
  /** Registry the instruments register into (e.g. the gateway's). */
  registry: Registry;
  /** `inference_pool` label value (default `default`). */
  poolName?: string;
  /** Distinct `fairness_id` label values before overflow to `other` (default 1000, as llm-d). */
  maxFairnessIds?: number;
}

/** Where gauges read queue occupancy and saturation (a `FlowController` fits). */
export interface FlowStatsSource {
  stats(): FlowControlStats;
  /** Current pool saturation; absent = the last value dispatch used (stale while idle). */
  saturation?(): number;
  /** Endpoints the detector reads as stale now; absent = 0. */
  staleEndpoints?(): number;
}

/** Fairness-id label given to flows past the cardinality cap. */
export const OVERFLOW_FAIRNESS_ID = "other";

const QUEUE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300];
const CYCLE_BUCKETS = [1e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 5e-3, 1e-2];
const FLOW_LABELS = ["inference_pool", "priority", "fairness_id"] as const;
const OUTCOME_LABELS = [...FLOW_LABELS, "outcome"] as const;

type FlowLabels = Record<(typeof FLOW_LABELS)[number], string>;

/**
 * The instruments, an observer to pass to `createFlowController`, and `bind` for the gauges'
 * stats source (the controller exists only after the observer is passed in).
 */
export class FlowControlMetrics implements FlowObserver {
  private readonly pool: string;
  private readonly maxFairnessIds: number;
  private readonly fairnessIds = new Set<string>();
  /** Every (priority, fairness_id) series ever reported, so emptied queues read 0, not vanish. */
  private readonly knownFlows = new Map<string, FlowLabels>();
  private readonly requests: Counter<(typeof OUTCOME_LABELS)[number]>;
  private readonly queueDuration: Histogram<(typeof OUTCOME_LABELS)[number]>;
  private readonly cycle: Histogram<"inference_pool">;
  private source: FlowStatsSource | undefined;

  constructor(options: FlowControlMetricsOptions) {
    this.pool = options.poolName ?? "default";
    this.maxFairnessIds = options.maxFairnessIds ?? 1000;
    const registers = [options.registry];
    const name = (suffix: string) => `llm_d_epp_flow_control_${suffix}`;
    this.requests = new Counter({
      name: name("requests_total"),
      help: "Flow-control final outcomes (dispatched, rejected-*, evicted)",
      labelNames: OUTCOME_LABELS,
      registers,
    });
    this.queueDuration = new Histogram({
      name: name("request_queue_duration_seconds"),
      help: "Time requests spent in the flow-control queue, by outcome",
      labelNames: OUTCOME_LABELS,
      buckets: QUEUE_BUCKETS,
      registers,
    });
    this.cycle = new Histogram({
      name: name("dispatch_cycle_duration_seconds"),
      help: "Duration of one dispatch evaluation (expire, dispatch, evict)",
      labelNames: ["inference_pool"],
      buckets: CYCLE_BUCKETS,
      registers,
    });
    this.registerGauges(registers, name);
  }

  /** Sets where the gauges read queue occupancy and saturation. */
  bind(source: FlowStatsSource): void {
    this.source = source;
  }

  /** Observer hook: counts the outcome; records queue time for everything but evictions. */
  exited(exit: FlowExit): void {
    const item = exit.item;
    const labels = {
      inference_pool: this.pool,
      priority: String(item.priority),
      fairness_id: this.fairnessLabel(item.fairnessId),
      outcome: exit.outcome,
    };
    this.requests.inc(labels);
    // An evicted request's queue time was recorded when it dispatched.
    if (exit.outcome !== "evicted") this.queueDuration.observe(labels, exit.queuedMs / 1000);
  }

  /** One dispatch evaluation took `seconds` (FlowGate's `onDispatchCycle`). */
  dispatchCycle(seconds: number): void {
    this.cycle.observe({ inference_pool: this.pool }, seconds);
  }

  private fairnessLabel(fairnessId: string): string {
    if (this.fairnessIds.has(fairnessId)) return fairnessId;
    if (this.fairnessIds.size >= this.maxFairnessIds) return OVERFLOW_FAIRNESS_ID;
    this.fairnessIds.add(fairnessId);
    return fairnessId;
  }

  private registerGauges(registers: Registry[], name: (suffix: string) => string): void {
    const metrics = this;
    const perFlow = (
      suffix: string,
      help: string,
      value: (flow: { requests: number; bytes: number }) => number,
    ) =>
      new Gauge({
        name: name(suffix),
        help,
        labelNames: FLOW_LABELS,
        registers,
        collect() {
          metrics.fillPerFlow(this, value);
        },
      });
    perFlow("queue_size", "Requests queued, per priority band and fairness id", (flow) => flow.requests);
    perFlow("queue_bytes", "Bytes queued, per priority band and fairness id", (flow) => flow.bytes);
    new Gauge({
      name: name("pool_saturation"),
      help: "Pool saturation (0 idle, >= 1 saturated)",
      labelNames: ["inference_pool"],
      registers,
      collect() {
        const source = metrics.source;
        const saturation = source?.saturation ? source.saturation() : (source?.stats().saturation ?? 0);
        this.set({ inference_pool: metrics.pool }, saturation);
      },
    });
    new Gauge({
      name: name("stale_endpoints"),
      help: "Endpoints whose metrics the saturation detector reads as stale (scored as saturated)",
      labelNames: ["inference_pool"],
      registers,
      collect() {
        this.set({ inference_pool: metrics.pool }, metrics.source?.staleEndpoints?.() ?? 0);
      },
    });
  }

  private fillPerFlow(
    gauge: Gauge<(typeof FLOW_LABELS)[number]>,
    value: (flow: { requests: number; bytes: number }) => number,
  ): void {
    gauge.reset();
    const stats = this.source?.stats();
    if (!stats) return;
    for (const band of stats.bands) {
      for (const flow of band.flows) {
        const labels = this.flowLabels(band.priority, flow.fairnessId);
        this.knownFlows.set(`${labels.priority}\u0000${labels.fairness_id}`, labels);
      }
    }
    for (const labels of this.knownFlows.values()) gauge.set(labels, 0);
    for (const band of stats.bands) {
      for (const flow of band.flows) gauge.inc(this.flowLabels(band.priority, flow.fairnessId), value(flow));
    }
  }

  private flowLabels(priority: number, fairnessId: string): FlowLabels {
    return {
      inference_pool: this.pool,
      priority: String(priority),
      fairness_id: this.fairnessLabel(fairnessId),
    };
  }
}
