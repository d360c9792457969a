/**
 * TTFT tail that counts the requests still waiting when a run is cut. A summary over completed
 * requests leaves them out, which credits a policy that starves some requests with a shorter tail.
 */
import { percentile } from "./percentile.ts";
import type { RequestRecord } from "./records.ts";

/** TTFT p99 with unfinished requests counted, and how many requests had no first token. */
export interface WaitingTail {
  p99Ms: number;
  unfinished: number;
  /** The {@link measuredRecords}, in record order. */
  measured: RequestRecord[];
  /** Each measured request's {@link waitedMs}, in the same order. */
  waitsMs: Float64Array;
}

/** Records of requests that arrived in [fromMs, toMs) and neither failed nor were rejected. */
export function measuredRecords(
  records: readonly RequestRecord[],
  fromMs: number,
  toMs: number,
): RequestRecord[] {
  return records.filter((r) => r.arrivalMs >= fromMs && r.arrivalMs < toMs && r.error === undefined);
}

/** True once the request's first token came (its `firstTokenMs` is NaN until then). */
export function hasFirstToken(r: RequestRecord): boolean {
  return Number.isFinite(r.firstTokenMs);
}

/** Arrival to first token; a request with no first token counts as waiting until `cutMs` (a lower bound). */
export function waitedMs(r: RequestRecord, cutMs: number): number {
  return (hasFirstToken(r) ? r.firstTokenMs : cutMs) - r.arrivalMs;
}

/** TTFT p99 (ms, nearest rank) of the {@link measuredRecords}, each as {@link waitedMs}. */
export function waitingTail(
  records: readonly RequestRecord[],
  fromMs: number,
  toMs: number,
  cutMs: number,
): WaitingTail {
  const measured = measuredRecords(records, fromMs, toMs);
  const waitsMs = Float64Array.from(measured, (r) => waitedMs(r, cutMs));
  const unfinished = measured.filter((r) => !hasFirstToken(r)).length;
  return { p99Ms: percentile(waitsMs, 99), unfinished, measured, waitsMs };
}

/** TTFTs (ms) of the `measured` records that completed: the sample a summary's TTFT percentiles are over. */
export function completedTtftsMs(measured: readonly RequestRecord[]): Float64Array {
  const done = measured.filter((r) => Number.isFinite(r.endMs));
  return Float64Array.from(done, (r) => r.firstTokenMs - r.arrivalMs);
}
