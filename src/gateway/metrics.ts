/**
 * The gateway's Prometheus metrics under llm-d's EPP names (`llm_d_epp_*`) plus llmd's own
 * `llmd_inflight_*`. One registry per gateway (tests run several in one process). Labels stay
 * bounded: model labels are only ever models the pool serves (else `other`), endpoint labels
 * only pool members, error codes a fixed catalogue.
 */
import { Registry } from "prom-client";
import type { ResponseUsage } from "../scheduler/framework/types.ts";
import type { InflightTracker } from "./inflight.ts";
import { type PoolMetricsView, registerInflightGauges, registerPoolGauges } from "./pool-gauges.ts";
import { type HistogramChild, LeanHistogram, LeanValue, type ValueChild } from "./lean-metrics.ts";

const DURATION_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60, 120,
  180, 240, 300, 360, 480, 600, 900, 1200, 1800, 2700, 3600,
];
const TOKEN_BUCKETS = [
  1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288,
  1048576,
];
const SCHEDULER_BUCKETS = [0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1];

/** Labels identifying the model of one request. */
export interface ModelLabels {
  model_name: string;
  target_model_name: string;
}

type ModelLabel = keyof ModelLabels;
const MODEL_LABELS: readonly ModelLabel[] = ["model_name", "target_model_name"];

/** Every per-request series of one model, resolved once (observing is then allocation-free). */
export class ModelSeries {
  private readonly errorsByCode = new Map<string, ValueChild>();
  private readonly disaggByType = new Map<string, ValueChild>();
  readonly requests: ValueChild;
  readonly running: ValueChild;
  readonly duration: HistogramChild;
  /** TTFT series indexed by `streaming` (0 = false, 1 = true). */
  readonly ttft: readonly [HistogramChild, HistogramChild];
  readonly inputTokens: HistogramChild;
  readonly outputTokens: HistogramChild;
  readonly cachedTokens: HistogramChild;

  constructor(
    private readonly family: RequestFamilies,
    private readonly labels: ModelLabels,
  ) {
    this.requests = family.requests.child(labels);
    this.running = family.running.child(labels);
    this.duration = family.duration.child(labels);
    this.ttft = [
      family.ttft.child({ ...labels, streaming: "false" }),
      family.ttft.child({ ...labels, streaming: "true" }),
    ];
    this.inputTokens = family.inputTokens.child(labels);
    this.outputTokens = family.outputTokens.child(labels);
    this.cachedTokens = family.cachedTokens.child(labels);
  }

  /** The error counter of `code` (codes are a fixed catalogue, so the cache stays small). */
  errors(code: string): ValueChild {
    return cachedChild(this.errorsByCode, code, () =>
      this.family.errors.child({ ...this.labels, error_code: code }),
    );
  }

  /** The P/D decision counter of `type` (the profile handler's four values). */
  disaggDecisions(type: string): ValueChild {
    return cachedChild(this.disaggByType, type, () =>
      this.family.disaggDecisions.child({ ...this.labels, decision_type: type }),
    );
  }
}

function cachedChild(cache: Map<string, ValueChild>, key: string, create: () => ValueChild): ValueChild {
  let child = cache.get(key);
  if (!child) {
    child = create();
    cache.set(key, child);
  }
  return child;
}

/** The labelled request families, in llm-d's names. */
class RequestFamilies {
  readonly requests: LeanValue<ModelLabel>;
  readonly errors: LeanValue<ModelLabel | "error_code">;
  readonly running: LeanValue<ModelLabel>;
  readonly duration: LeanHistogram<ModelLabel>;
  readonly ttft: LeanHistogram<ModelLabel | "streaming">;
  readonly inputTokens: LeanHistogram<ModelLabel>;
  readonly outputTokens: LeanHistogram<ModelLabel>;
  readonly cachedTokens: LeanHistogram<ModelLabel>;
  readonly disaggDecisions: LeanValue<ModelLabel | "decision_type">;

  constructor(r: Registry) {
    const p = "llm_d_epp_";
    this.requests = new LeanValue("counter", `${p}request_total`, "Requests received", MODEL_LABELS, r);
    this.errors = new LeanValue(
      "counter",
      `${p}request_error_total`,
      "Requests that failed, by error code",
      [...MODEL_LABELS, "error_code"],
      r,
    );
    this.running = new LeanValue("gauge", `${p}request_running`, "Requests in flight", MODEL_LABELS, r);
    this.disaggDecisions = new LeanValue(
      "counter",
      `${p}disagg_decision_total`,
      "P/D placements by the stages they run (decode-only, prefill-decode, encode-decode, encode-prefill-decode)",
      [...MODEL_LABELS, "decision_type"],
      r,
    );
    const histogram = <L extends string>(name: string, help: string, buckets: number[], labels: L[]) =>
      new LeanHistogram<L>(`${p}${name}`, help, buckets, labels, r);
    this.duration = histogram("request_duration_seconds", "End-to-end request latency", DURATION_BUCKETS, [
      ...MODEL_LABELS,
    ]);
    this.ttft = histogram("request_ttft_seconds", "Time to first token", DURATION_BUCKETS, [
      ...MODEL_LABELS,
      "streaming",
    ]);
    this.inputTokens = histogram("request_input_tokens", "Prompt tokens per request", TOKEN_BUCKETS, [
      ...MODEL_LABELS,
    ]);
    this.outputTokens = histogram("request_output_tokens", "Completion tokens per request", TOKEN_BUCKETS, [
      ...MODEL_LABELS,
    ]);
    this.cachedTokens = histogram("request_cached_tokens", "Prompt tokens served from cache", TOKEN_BUCKETS, [
      ...MODEL_LABELS,
    ]);
  }
}

/** Registry and instruments of one gateway. */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly families: RequestFamilies;
  private readonly byModel = new Map<string, ModelSeries>();
  private readonly schedulerE2e: HistogramChild;
  private readonly pluginDuration: LeanHistogram<"extension_point" | "plugin_type" | "plugin_name">;
  /** `staged-prefill` stages sent that the endpoint answered, and those it did not. */
  private readonly stagesAnswered: ValueChild;
  private readonly stagesUnanswered: ValueChild;

  constructor(pool: PoolMetricsView, inflight: InflightTracker, poolName = "default") {
    this.families = new RequestFamilies(this.registry);
    const p = "llm_d_epp_";
    this.schedulerE2e = new LeanHistogram(
      `${p}scheduler_e2e_duration_seconds`,
      "Scheduling latency",
      SCHEDULER_BUCKETS,
      [],
      this.registry,
    ).child({});
    this.pluginDuration = new LeanHistogram(
      `${p}plugin_duration_seconds`,
      "Plugin latency",
      SCHEDULER_BUCKETS,
      ["extension_point", "plugin_type", "plugin_name"],
      this.registry,
    );
    const stages = new LeanValue(
      "counter",
      "llmd_staged_prefill_stages_total",
      "Stages of long cold prompts sent ahead of the request (staged-prefill), by outcome",
      ["outcome"],
      this.registry,
    );
    this.stagesAnswered = stages.child({ outcome: "answered" });
    this.stagesUnanswered = stages.child({ outcome: "unanswered" });
    registerPoolGauges(this.registry, pool, poolName);
    registerInflightGauges(this.registry, pool, inflight);
  }

  /** The series of `model` (`model_name` = `target_model_name`; pass only bounded names). */
  forModel(model: string): ModelSeries {
    let series = this.byModel.get(model);
    if (!series) {
      series = new ModelSeries(this.families, { model_name: model, target_model_name: model });
      this.byModel.set(model, series);
    }
    return series;
  }

  /** The duration series (seconds) of one plugin at one extension point; cache the handle. */
  pluginTimer(extensionPoint: string, pluginType: string, pluginName: string): HistogramChild {
    return this.pluginDuration.child({
      extension_point: extensionPoint,
      plugin_type: pluginType,
      plugin_name: pluginName,
    });
  }

  /** A request was admitted for scheduling. */
  requestStarted(series: ModelSeries): void {
    series.requests.inc();
    series.running.inc();
  }

  /** A started request ended; `ttftSeconds` undefined when no byte ever arrived. */
  requestEnded(
    series: ModelSeries,
    seconds: number,
    ttftSeconds: number | undefined,
    streaming: boolean,
  ): void {
    series.running.dec();
    series.duration.observe(seconds);
    if (ttftSeconds !== undefined) series.ttft[streaming ? 1 : 0].observe(ttftSeconds);
  }

  /** Token usage reported by the model server. */
  usage(series: ModelSeries, usage: ResponseUsage): void {
    series.inputTokens.observe(usage.promptTokens);
    series.outputTokens.observe(usage.completionTokens);
    series.cachedTokens.observe(usage.cachedTokens);
  }

  /** A request failed with `errorCode` (an `LlmdError.code` or `http_<status>` from upstream). */
  requestFailed(series: ModelSeries, errorCode: string): void {
    series.errors(errorCode).inc();
  }

  /** A request's `staged-prefill` plan of `planned` stages ran; the endpoint answered `answered`. */
  staged(planned: number, answered: number): void {
    this.stagesAnswered.inc(answered);
    if (planned > answered) this.stagesUnanswered.inc(planned - answered);
  }

  /** One scheduling decision took `seconds`. */
  scheduled(seconds: number): void {
    this.schedulerE2e.observe(seconds);
  }
}
