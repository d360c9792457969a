/**
 * Per-request outcomes as hosts (fleet simulator, live load generator) record them. Times are ms
 * on the run's clock (0 = run start); NaN = did not happen.
 */
import { DEFAULT_FAIRNESS_ID } from "../flow-control/identity.ts";
import type { WorkloadRequest } from "../workload/types.ts";

/** What happened to one request. */
export interface RequestRecord {
  id: string;
  kind: string;
  arrivalMs: number;
  /** Start of the first engine step that worked on it (NaN if unknown, e.g. over HTTP). */
  startMs: number;
  firstTokenMs: number;
  endMs: number;
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens served from cache at scheduling (engine `cachedTokens` / usage `cached_tokens`). */
  cachedTokens: number;
  /** Hit the ideal infinite cache would have given (same admitted requests, same block size). */
  idealCachedTokens: number;
  /** Endpoint index; -1 when rejected before dispatch. */
  endpoint: number;
  /** Error code when it failed or was rejected, else undefined. */
  error?: string;
  /** Objective name (`default` when none). */
  tenant: string;
  fairnessId: string;
  priority: number;
  /**
   * Set exactly once, when the request leaves the system: `served`, a flow-control
   * `rejected-<reason>`, `evicted`, `failed-<code>`, or `unfinished` (still running at the drain cut).
   */
  outcome?: string;
  /** Time spent waiting in admission before scheduling, ms (NaN if never dispatched). */
  queuedMs: number;
}

/** A new record for an arriving request; the host fills the rest as it progresses. */
export function newRecord(id: string, kind: string, arrivalMs: number, inputTokens: number): RequestRecord {
  return {
    id,
    kind,
    arrivalMs,
    startMs: Number.NaN,
    firstTokenMs: Number.NaN,
    endMs: Number.NaN,
    inputTokens,
    outputTokens: 0,
    cachedTokens: 0,
    idealCachedTokens: 0,
    endpoint: -1,
    tenant: "default",
    fairnessId: DEFAULT_FAIRNESS_ID,
    priority: 0,
    queuedMs: Number.NaN,
  };
}

/**
 * A fresh record of a workload request arriving at `atMs` (workload ms): tenant = its objective
 * (`default` when none), priority from `objectives` (unknown or none = 0), not yet queued or ended.
 */
export function recordFor(
  request: WorkloadRequest,
  atMs: number,
  objectives: Readonly<Record<string, number>>,
): RequestRecord {
  const tenant = request.objective ?? "default";
  return {
    ...newRecord(request.id, request.kind ?? "default", atMs, request.inputTokens),
    tenant,
    fairnessId: request.fairnessId ?? DEFAULT_FAIRNESS_ID,
    priority: objectives[tenant] ?? 0,
  };
}

/** Prefill tokens computed per endpoint over time, in fixed buckets (for load spread and charts). */
export class LoadTimeline {
  /** bucket → per-endpoint prefill tokens. */
  readonly buckets: Float64Array[] = [];

  /** @param bucketMs bucket width (> 0); @param endpoints number of endpoints. */
  constructor(
    readonly bucketMs: number,
    readonly endpoints: number,
  ) {}

  /** Adds `tokens` computed by `endpoint` in a step starting at `atMs`. */
  add(endpoint: number, atMs: number, tokens: number): void {
    const b = Math.floor(atMs / this.bucketMs);
    while (this.buckets.length <= b) this.buckets.push(new Float64Array(this.endpoints));
    this.buckets[b]![endpoint]! += tokens;
  }

  /** Per-endpoint totals over buckets overlapping [fromMs, toMs). */
  totals(fromMs = 0, toMs = Number.POSITIVE_INFINITY): Float64Array {
    const out = new Float64Array(this.endpoints);
    this.buckets.forEach((bucket, b) => {
      if ((b + 1) * this.bucketMs <= fromMs || b * this.bucketMs >= toMs) return;
      for (let e = 0; e < this.endpoints; e++) out[e]! += bucket[e]!;
    });
    return out;
  }
}
