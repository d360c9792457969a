/**
 * Runs one scheduling profile: filters in order, then weighted scorers, then the picker.
 * Each scorer's value is clamped to [0,1] (NaN and missing entries count as 0), multiplied by its
 * weight and summed per endpoint — llm-d's scoring math.
 */
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type { ProfileRunResult, SchedulerProfile, SchedulingContext, ScoredEndpoint } from "./types.ts";

/** Clamps a scorer output to [0,1]; NaN and undefined become 0. */
export function clampScore(value: number | undefined): number {
  if (value === undefined || !(value > 0)) return 0;
  return value > 1 ? 1 : value;
}

/** Endpoints surviving every filter of the profile (may be empty). */
export function runFilters(
  ctx: SchedulingContext,
  profile: SchedulerProfile,
  endpoints: readonly Endpoint[],
): readonly Endpoint[] {
  let candidates = endpoints;
  for (const filter of profile.filters) {
    if (candidates.length === 0) break;
    candidates = filter.filter(ctx, candidates);
  }
  return candidates;
}

/** Weighted sum of clamped scores per candidate, aligned with `candidates`. */
export function runScorers(
  ctx: SchedulingContext,
  profile: SchedulerProfile,
  candidates: readonly Endpoint[],
): ScoredEndpoint[] {
  const totals = new Float64Array(candidates.length);
  for (const { scorer, weight } of profile.scorers) {
    const scores = scorer.score(ctx, candidates);
    for (let i = 0; i < totals.length; i++) totals[i]! += weight * clampScore(scores[i]);
  }
  const scored: ScoredEndpoint[] = new Array(candidates.length);
  for (let i = 0; i < candidates.length; i++) scored[i] = { endpoint: candidates[i]!, score: totals[i]! };
  return scored;
}

/** The profile's result, or null when filters drained every endpoint or the picker chose none. */
export function runProfile(
  ctx: SchedulingContext,
  profile: SchedulerProfile,
  endpoints: readonly Endpoint[],
): ProfileRunResult | null {
  const candidates = runFilters(ctx, profile, endpoints);
  if (candidates.length === 0) return null;
  const result = profile.picker.pick(ctx, runScorers(ctx, profile, candidates), profile.name);
  return result.targetEndpoints.length > 0 ? result : null;
}
