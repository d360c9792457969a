/**
 * Run summary (workloads.md §6): token-weighted hit rate at scheduling, the ideal ceiling over the
 * same admitted requests, captured = achieved/ideal, latency percentiles, throughput, goodput under
 * an SLO, load spread and cost. Only requests arriving inside the measurement window count.
 */
import { maxOverMean, percentileSorted, sortedCopy } from "./percentile.ts";
import type { RequestRecord } from "./records.ts";

/** Service-level objective for goodput, ms. */
export interface Slo {
  ttftMs: number;
  itlMs: number;
}

/** What a summary needs besides the records. */
export interface SummaryContext {
  /** Measurement window on the run clock, ms: requests arriving in [fromMs, toMs) count. */
  fromMs: number;
  toMs: number;
  slo: Slo;
  /** Price of one GPU-hour in dollars and GPUs in the fleet (replicas × tp). */
  gpuHourPrice: number;
  gpus: number;
  /** Per-endpoint prefill tokens computed in the window (engine steps), when the host knows them. */
  prefillByEndpoint?: ArrayLike<number>;
  /** Engine preemptions in the window, when known. */
  preemptions?: number;
}

/** Percentiles of one latency, ms. */
export interface Quantiles {
  p50: number;
  p90: number;
  p99: number;
}

/** The headline numbers of one run. */
export interface RunSummary {
  requests: number;
  completed: number;
  failed: number;
  hitRate: number;
  idealHitRate: number;
  captured: number;
  /** Share of completed requests whose ideal reuse is ≥ 90% of input. */
  reuse90Share: number;
  ttftMs: Quantiles;
  itlMs: Quantiles;
  e2eMs: Quantiles;
  queueMs: Quantiles;
  inputTokensPerS: number;
  outputTokensPerS: number;
  /** Completed requests per second meeting the SLO, and their share of arrivals. */
  goodputRps: number;
  sloAttainment: number;
  prefillTokens: number;
  /** max/mean of per-endpoint prefill tokens (NaN when unknown). */
  loadSpread: number;
  preemptions: number;
  costPerMInput: number;
  costPerMOutput: number;
}

function quantiles(values: number[]): Quantiles {
  const sorted = sortedCopy(values.filter((v) => Number.isFinite(v)));
  return {
    p50: percentileSorted(sorted, 50),
    p90: percentileSorted(sorted, 90),
    p99: percentileSorted(sorted, 99),
  };
}

/** Mean inter-token latency of one request, ms (NaN with fewer than two tokens). */
export function interTokenMs(r: RequestRecord): number {
  return r.outputTokens > 1 ? (r.endMs - r.firstTokenMs) / (r.outputTokens - 1) : Number.NaN;
}

/** Summarises records over the context's window. */
export function summarize(records: readonly RequestRecord[], ctx: SummaryContext): RunSummary {
  const inWindow = records.filter((r) => r.arrivalMs >= ctx.fromMs && r.arrivalMs < ctx.toMs);
  const done = inWindow.filter((r) => r.error === undefined && Number.isFinite(r.endMs));
  let input = 0;
  let cached = 0;
  let ideal = 0;
  let output = 0;
  let reuse90 = 0;
  let good = 0;
  for (const r of done) {
    input += r.inputTokens;
    cached += r.cachedTokens;
    ideal += r.idealCachedTokens;
    output += r.outputTokens;
    if (r.idealCachedTokens >= 0.9 * r.inputTokens) reuse90++;
    const itl = interTokenMs(r);
    if (r.firstTokenMs - r.arrivalMs <= ctx.slo.ttftMs && !(itl > ctx.slo.itlMs)) good++;
  }
  const seconds = (ctx.toMs - ctx.fromMs) / 1000;
  const hours = seconds / 3600;
  const prefill = ctx.prefillByEndpoint
    ? Array.from(ctx.prefillByEndpoint).reduce((a, b) => a + b, 0)
    : input - cached;
  const cost = ctx.gpuHourPrice * ctx.gpus * hours;
  return {
    requests: inWindow.length,
    completed: done.length,
    failed: inWindow.filter((r) => r.error !== undefined).length,
    hitRate: input > 0 ? cached / input : Number.NaN,
    idealHitRate: input > 0 ? ideal / input : Number.NaN,
    captured: ideal > 0 ? cached / ideal : Number.NaN,
    reuse90Share: done.length > 0 ? reuse90 / done.length : Number.NaN,
    ttftMs: quantiles(done.map((r) => r.firstTokenMs - r.arrivalMs)),
    itlMs: quantiles(done.map(interTokenMs)),
    e2eMs: quantiles(done.map((r) => r.endMs - r.arrivalMs)),
    queueMs: quantiles(done.map((r) => r.startMs - r.arrivalMs)),
    inputTokensPerS: input / seconds,
    outputTokensPerS: output / seconds,
    goodputRps: good / seconds,
    sloAttainment: inWindow.length > 0 ? good / inWindow.length : Number.NaN,
    prefillTokens: prefill,
    loadSpread: ctx.prefillByEndpoint ? maxOverMean(ctx.prefillByEndpoint) : Number.NaN,
    preemptions: ctx.preemptions ?? 0,
    costPerMInput: input > 0 ? cost / (input / 1e6) : Number.NaN,
    costPerMOutput: output > 0 ? cost / (output / 1e6) : Number.NaN,
  };
}
