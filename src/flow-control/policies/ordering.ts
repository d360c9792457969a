/**
 * Ordering policies (tier 3), each a sort key computed once at enqueue (smaller first; ties by
 * arrival): `fcfs-ordering-policy` (arrival time), `edf-ordering-policy` (arrival + effective TTL,
 * no TTL → behind every deadline) and `slo-deadline-ordering-policy` (arrival + `x-llm-d-slo-ttft-ms`,
 * missing → behind every deadline).
 */
import type { FlowItem, OrderingPolicy } from "../types.ts";

/** `fcfs-ordering-policy`: exact first-come first-served by logical enqueue time. */
export function fcfsOrdering(name = "fcfs-ordering-policy"): OrderingPolicy {
  return { type: "fcfs-ordering-policy", name, kind: "ordering", sortKey: (item) => item.enqueuedAt };
}

/** `edf-ordering-policy`: earliest deadline (enqueue + effective TTL) first. */
export function edfOrdering(name = "edf-ordering-policy"): OrderingPolicy {
  return {
    type: "edf-ordering-policy",
    name,
    kind: "ordering",
    sortKey: (item: FlowItem, ttlMs: number) => item.enqueuedAt + ttlMs,
  };
}

/** `slo-deadline-ordering-policy`: earliest TTFT deadline (arrival + SLO) first. */
export function sloDeadlineOrdering(name = "slo-deadline-ordering-policy"): OrderingPolicy {
  return {
    type: "slo-deadline-ordering-policy",
    name,
    kind: "ordering",
    sortKey: (item: FlowItem) =>
      item.sloTtftMs !== undefined && item.sloTtftMs >= 0
        ? item.enqueuedAt + item.sloTtftMs
        : Number.POSITIVE_INFINITY,
  };
}
