/** Order statistics used by every report. */

/**
 * Nearest-rank percentile of `values` (any order; copied, not mutated): the smallest value with at
 * least p% of the values ≤ it. `p` in [0, 100]; NaN for an empty input.
 */
export function percentile(values: ArrayLike<number>, p: number): number {
  return percentileSorted(sortedCopy(values), p);
}

/** Nearest-rank percentile of an ascending array. */
export function percentileSorted(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * n));
  return sorted[Math.min(n, rank) - 1]!;
}

/** Ascending copy as a Float64Array. */
export function sortedCopy(values: ArrayLike<number>): Float64Array {
  return Float64Array.from(values).sort();
}

/** Arithmetic mean; NaN when empty. */
export function mean(values: ArrayLike<number>): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i]!;
  return sum / values.length;
}

/** max/mean of non-negative loads (1 = perfectly even); NaN when the mean is 0. */
export function maxOverMean(values: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) max = Math.max(max, values[i]!);
  const m = mean(values);
  return m > 0 ? max / m : Number.NaN;
}
