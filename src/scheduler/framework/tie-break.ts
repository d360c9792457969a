/**
 * Load-aware deterministic tie-breaking for pickers (beyond llm-d, whose max-score-picker breaks
 * ties at random and lets a burst of equal-score requests pile onto one endpoint). Among endpoints
 * with equal score, prefer the least loaded; among equally loaded ones, rotate deterministically.
 */
import type { Endpoint } from "../../endpoints/endpoint.ts";
import { attributeKey, IN_FLIGHT_LOAD, type InFlightLoad } from "./data-keys.ts";
import type { SchedulingContext, ScoredEndpoint } from "./types.ts";

/** Scores closer than this are ties (weighted sums of floats rarely compare exactly). */
const SCORE_EPSILON = 1e-9;
const IN_FLIGHT_KEY = attributeKey(IN_FLIGHT_LOAD);

/** The default inflight-load producer's per-endpoint snapshot for this request, if it ran. */
function inFlightSnapshot(ctx: SchedulingContext): ReadonlyMap<string, InFlightLoad> | undefined {
  const snapshot = ctx.state.get(IN_FLIGHT_KEY);
  return snapshot instanceof Map ? snapshot : undefined;
}

/**
 * Requests believed on the endpoint now: the router's in-flight count when the inflight-load
 * producer ran (`snapshot`), else the last scrape's waiting + running plus what was dispatched since.
 */
export function endpointLoad(endpoint: Endpoint, snapshot?: ReadonlyMap<string, InFlightLoad>): number {
  const inFlight = snapshot?.get(endpoint.metadata.key);
  if (inFlight) return inFlight.requests;
  const m = endpoint.metrics;
  return m.waitingQueueSize + m.runningRequestsSize + m.dispatchedSinceScrape;
}

/** Per-picker rotation state; one instance per picker so decisions are reproducible. */
export class TieBreaker {
  private turn = 0;

  /** Index of the best endpoint (highest score, then least load, then rotation); -1 when empty. */
  best(ctx: SchedulingContext, scored: readonly ScoredEndpoint[]): number {
    const snapshot = inFlightSnapshot(ctx);
    let top = Number.NEGATIVE_INFINITY;
    for (const s of scored) if (s.score > top) top = s.score;
    let minLoad = Number.POSITIVE_INFINITY;
    let ties = 0;
    for (const s of scored) {
      if (s.score < top - SCORE_EPSILON) continue;
      const load = endpointLoad(s.endpoint, snapshot);
      if (load < minLoad) [minLoad, ties] = [load, 1];
      else if (load === minLoad) ties++;
    }
    if (ties === 0) return -1;
    let k = this.turn++ % ties;
    for (let i = 0; i < scored.length; i++) {
      const s = scored[i]!;
      if (s.score >= top - SCORE_EPSILON && endpointLoad(s.endpoint, snapshot) === minLoad && k-- === 0)
        return i;
    }
    return -1;
  }

  /** All indices, best first, by the same order as `best`. */
  rank(ctx: SchedulingContext, scored: readonly ScoredEndpoint[]): number[] {
    const snapshot = inFlightSnapshot(ctx);
    const n = scored.length;
    const offset = n > 0 ? this.turn++ % n : 0;
    const keys = scored.map((s, i) => ({
      i,
      score: Math.round(s.score / SCORE_EPSILON),
      load: endpointLoad(s.endpoint, snapshot),
      rotation: (i - offset + n) % n,
    }));
    keys.sort((a, b) => b.score - a.score || a.load - b.load || a.rotation - b.rotation);
    return keys.map((k) => k.i);
  }
}
