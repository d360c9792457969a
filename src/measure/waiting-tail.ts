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
}

/**
 * TTFT p99 (ms, nearest rank) over the requests that arrived in [fromMs, toMs) and did not fail
 * or get rejected; a request with no first token counts as waiting until `cutMs` (a lower bound
 * on its TTFT).
 */
export function waitingTail(
  records: readonly RequestRecord[],
  fromMs: number,
  toMs: number,
  cutMs: number,
): WaitingTail {
  const waits: number[] = [];
  let unfinished = 0;
  for (const r of records) {
    if (r.arrivalMs < fromMs || r.arrivalMs >= toMs || r.error !== undefined) continue;
    const started = Number.isFinite(r.firstTokenMs);
    if (!started) unfinished++;
    waits.push((started ? r.firstTokenMs : cutMs) - r.arrivalMs);
  }
  return { p99Ms: percentile(waits, 99), unfinished };
}
