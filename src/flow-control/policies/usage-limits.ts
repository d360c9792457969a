/**
 * Usage-limit policies: per-band dispatch ceilings. A band dispatches while pool saturation is
 * below its ceiling. `static-usage-limit-policy` (one threshold), `priority-holdback-policy`
 * (linear from maxCeiling at the top band to minCeiling at the bottom, by rank or by priority value)
 * and `soft-reflective-ceiling-policy` (ceiling[i] = 1 − i·sat/(N−1); a gated band still opens one
 * dispatch attempt in round(sat/(1−sat)) so lower bands trickle instead of starving).
 */
import type { CeilingQuery, UsageLimitPolicy } from "../types.ts";

/** `static-usage-limit-policy`: the same ceiling for every band. */
export function staticUsageLimit(threshold = 1, name = "static-usage-limit-policy"): UsageLimitPolicy {
  return { type: "static-usage-limit-policy", name, kind: "usage-limit", ceiling: () => threshold };
}

/** Parameters of `priority-holdback-policy`. */
export interface PriorityHoldbackParams {
  shape: "linear";
  /** Interpolate by band rank, or by the priority value between the highest and lowest band. */
  domain: "rank" | "value";
  /** Ceiling of the lowest band. */
  minCeiling: number;
  /** Ceiling of the highest band. */
  maxCeiling: number;
}

/** `priority-holdback-policy`: lower bands are gated at lower saturation. */
export function priorityHoldback(
  params: PriorityHoldbackParams,
  name = "priority-holdback-policy",
): UsageLimitPolicy {
  return {
    type: "priority-holdback-policy",
    name,
    kind: "usage-limit",
    ceiling(query: Readonly<CeilingQuery>): number {
      const span = params.domain === "rank" ? query.bandCount - 1 : query.maxPriority - query.minPriority;
      const distance = params.domain === "rank" ? query.rank : query.maxPriority - query.priority;
      const fraction = span > 0 ? distance / span : 0;
      return params.maxCeiling - (params.maxCeiling - params.minCeiling) * fraction;
    },
  };
}

/** `soft-reflective-ceiling-policy`: graduated ceilings with periodic openings for gated bands. */
export function softReflectiveCeiling(name = "soft-reflective-ceiling-policy"): UsageLimitPolicy {
  return {
    type: "soft-reflective-ceiling-policy",
    name,
    kind: "usage-limit",
    ceiling(query: Readonly<CeilingQuery>): number {
      const { saturation, rank, bandCount } = query;
      // Clamped at 0: past saturation 1 the lower bands' line falls below zero, outside a ceiling's range.
      const ceiling = bandCount > 1 ? Math.max(0, 1 - (rank * saturation) / (bandCount - 1)) : 1;
      if (saturation < ceiling || saturation >= 1) return ceiling;
      const period = Math.max(1, Math.round(saturation / (1 - saturation)));
      return query.attempt % period === 0 ? Number.POSITIVE_INFINITY : ceiling;
    },
  };
}
