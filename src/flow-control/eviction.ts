/**
 * In-flight eviction (llm-d `enableEviction`): when dispatch is blocked by saturation and a higher
 * band waits, an in-flight sheddable request is evicted (429 `evicted`) to make room. The filter
 * says who may be evicted, the order policy who goes first.
 */
import type { EvictionFilter, EvictionOrderPolicy, InFlightItem } from "./types.ts";

/** `sheddable-eviction-filter`: only priority < 0 requests may be evicted. */
export function sheddableEvictionFilter(name = "sheddable-eviction-filter"): EvictionFilter {
  return {
    type: "sheddable-eviction-filter",
    name,
    kind: "eviction-filter",
    evictable: (candidate) => candidate.item.priority < 0,
  };
}

/** `priority-then-time-eviction-order-policy`: lowest priority first, then most recently dispatched. */
export function priorityThenTimeEvictionOrder(
  name = "priority-then-time-eviction-order-policy",
): EvictionOrderPolicy {
  return {
    type: "priority-then-time-eviction-order-policy",
    name,
    kind: "eviction-order",
    before: (a, b) =>
      a.item.priority !== b.item.priority
        ? a.item.priority < b.item.priority
        : a.dispatchedAt > b.dispatchedAt,
  };
}

/**
 * The first victim by `order` among `inFlight` items that pass `filter` and have priority below
 * `belowPriority`; undefined when none qualifies. O(n) over in-flight items, run only when blocked.
 */
export function pickEvictionVictim<T extends InFlightItem>(
  inFlight: Iterable<T>,
  belowPriority: number,
  filter: EvictionFilter,
  order: EvictionOrderPolicy,
): T | undefined {
  let victim: T | undefined;
  for (const candidate of inFlight) {
    if (candidate.item.priority >= belowPriority || !filter.evictable(candidate)) continue;
    if (!victim || order.before(candidate, victim)) victim = candidate;
  }
  return victim;
}
