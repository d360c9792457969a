/**
 * `utilization-detector` (default saturation detector): endpoint score = max(queue/queueThreshold,
 * kv/kvThreshold); pool saturation = unweighted mean over endpoints. Stale or never-scraped metrics
 * count as at least 1.0 (fail closed; see `endpointUtilization`), and an empty pool is 1.0. Queue
 * depth includes requests the router dispatched since the last scrape, so a burst does not
 * overshoot between scrapes.
 */
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type { SaturationDetector } from "../types.ts";

/** Parameters (llm-d names; `metricsStalenessThreshold` already in ms). */
export interface UtilizationDetectorParams {
  queueDepthThreshold: number;
  kvCacheUtilThreshold: number;
  /** Metrics older than this (ms) are stale. */
  metricsStalenessThreshold: number;
  /** Per-endpoint filter limit = threshold × (1 + headroom). */
  headroom: number;
}

function isStale(endpoint: Endpoint, now: number, stalenessMs: number): boolean {
  const updated = endpoint.metrics.updatedAtMs;
  return updated <= 0 || now - updated > stalenessMs;
}

/**
 * Utilization score of one endpoint (≥ 0; 1 = at threshold). Stale metrics score at least 1 and
 * never less than the last reading plus what was dispatched since, so a busy model server whose
 * scrapes run late never looks lighter than it was (llm-d scores it exactly 1; see "Deviations from
 * llm-d" in docs/flow-control.md). Shared with the probabilistic admitter so both read load alike.
 */
export function endpointUtilization(
  endpoint: Endpoint,
  now: number,
  params: Omit<UtilizationDetectorParams, "headroom">,
): number {
  const queue = endpoint.metrics.waitingQueueSize + endpoint.metrics.dispatchedSinceScrape;
  const score = Math.max(
    queue / params.queueDepthThreshold,
    endpoint.metrics.kvCacheUsagePercent / params.kvCacheUtilThreshold,
  );
  return isStale(endpoint, now, params.metricsStalenessThreshold) ? Math.max(1, score) : score;
}

/** Mean utilization over `endpoints` (1 when empty). */
export function poolUtilization(
  endpoints: readonly Endpoint[],
  now: number,
  params: Omit<UtilizationDetectorParams, "headroom">,
): number {
  if (endpoints.length === 0) return 1;
  let sum = 0;
  for (const endpoint of endpoints) sum += endpointUtilization(endpoint, now, params);
  return sum / endpoints.length;
}

/** Builds a `utilization-detector` instance. */
export function utilizationDetector(
  params: UtilizationDetectorParams,
  name = "utilization-detector",
): SaturationDetector {
  return {
    type: "utilization-detector",
    name,
    kind: "saturation-detector",
    saturation: (endpoints, now) => poolUtilization(endpoints, now, params),
    staleEndpoints: (endpoints, now) =>
      endpoints.filter((e) => isStale(e, now, params.metricsStalenessThreshold)).length,
    endpointSaturated(endpoint, now) {
      if (isStale(endpoint, now, params.metricsStalenessThreshold)) return true;
      const limit = 1 + params.headroom;
      const queue = endpoint.metrics.waitingQueueSize + endpoint.metrics.dispatchedSinceScrape;
      return (
        queue >= params.queueDepthThreshold * limit ||
        endpoint.metrics.kvCacheUsagePercent >= params.kvCacheUtilThreshold * limit
      );
    },
  };
}
