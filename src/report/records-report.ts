/**
 * Where a run's slow and unfinished requests waited, read from its per-request records: for the
 * slowest requests, their engine wait against their own prefill and what was still prefilling
 * ahead of them on their replica; unfinished requests per replica; and each replica's live session
 * footprint over time (what `no-hit-lru-scorer`'s footprint placement counts, replayed from the
 * records).
 */
import type { RequestRecord } from "../measure/records.ts";
import { hasFirstToken, measuredRecords, waitedMs } from "../measure/waiting-tail.ts";

/** One of the slowest requests and what it waited for. */
export interface SlowRequest {
  record: RequestRecord;
  /** Arrival to first token; a request without one counts as waiting until the cut. */
  ttftMs: number;
  /** Arrival to the first engine step, less the router's admission queue (NaN if never started). */
  engineWaitMs: number;
  /** First engine step to first token: its own prefill (NaN if never started). */
  ownPrefillMs: number;
  /** Requests on the same replica that arrived earlier and had no first token yet when it arrived. */
  ahead: RequestRecord[];
}

/** The `count` slowest measured requests by TTFT (unfinished ones wait until `cutMs`), slowest first. */
export function slowestRequests(
  records: readonly RequestRecord[],
  fromMs: number,
  toMs: number,
  cutMs: number,
  count: number,
): SlowRequest[] {
  const ttft = (r: RequestRecord) => waitedMs(r, cutMs);
  return measuredRecords(records, fromMs, toMs)
    .sort((a, b) => ttft(b) - ttft(a))
    .slice(0, count)
    .map((record) => ({
      record,
      ttftMs: ttft(record),
      engineWaitMs: record.startMs - record.arrivalMs - record.queuedMs,
      ownPrefillMs: record.firstTokenMs - record.startMs,
      ahead: records.filter(
        (o) =>
          o !== record &&
          o.endpoint === record.endpoint &&
          o.arrivalMs <= record.arrivalMs &&
          !(o.firstTokenMs <= record.arrivalMs),
      ),
    }));
}

/** Per replica: requests and sessions it served or held, measured requests it never started. */
export interface ReplicaOutcome {
  endpoint: number;
  requests: number;
  sessions: number;
  unfinished: number;
  /** Prompt tokens it prefilled (uncached) over the whole run. */
  prefilledTokens: number;
}

/** {@link ReplicaOutcome} of every replica that took a request, by endpoint index. */
export function replicaOutcomes(
  records: readonly RequestRecord[],
  fromMs: number,
  toMs: number,
  sessionOf: (id: string) => string,
): ReplicaOutcome[] {
  const unfinished = new Set(measuredRecords(records, fromMs, toMs).filter((r) => !hasFirstToken(r)));
  const byEndpoint = new Map<number, ReplicaOutcome & { ids: Set<string> }>();
  for (const r of records) {
    if (r.endpoint < 0) continue;
    let o = byEndpoint.get(r.endpoint);
    if (!o) {
      o = {
        endpoint: r.endpoint,
        requests: 0,
        sessions: 0,
        unfinished: 0,
        prefilledTokens: 0,
        ids: new Set(),
      };
      byEndpoint.set(r.endpoint, o);
    }
    o.requests++;
    o.ids.add(sessionOf(r.id));
    if (unfinished.has(r)) o.unfinished++;
    if (hasFirstToken(r)) o.prefilledTokens += r.inputTokens - r.cachedTokens;
  }
  return [...byEndpoint.values()]
    .sort((a, b) => a.endpoint - b.endpoint)
    .map(({ ids, ...o }) => ({ ...o, sessions: ids.size }));
}

/**
 * Live session footprint per replica at each of `atMs` (tokens, indexed by endpoint up to the
 * largest index seen): for every session and replica, its largest prompt among requests that
 * arrived by then and were still running or completed at most `idleMs` before.
 */
export function footprintTimeline(
  records: readonly RequestRecord[],
  atMs: readonly number[],
  idleMs: number,
  sessionOf: (id: string) => string,
): number[][] {
  const replicas = records.reduce((most, r) => Math.max(most, r.endpoint), -1) + 1;
  return atMs.map((t) => {
    const largest = new Map<string, { endpoint: number; tokens: number }>();
    for (const r of records) {
      if (r.endpoint < 0 || r.arrivalMs > t || r.endMs + idleMs < t) continue;
      const key = `${sessionOf(r.id)}\u0000${r.endpoint}`;
      const held = largest.get(key)?.tokens ?? 0;
      largest.set(key, { endpoint: r.endpoint, tokens: Math.max(held, r.inputTokens) });
    }
    const sums = new Array<number>(replicas).fill(0);
    for (const { endpoint, tokens } of largest.values()) sums[endpoint]! += tokens;
    return sums;
  });
}
