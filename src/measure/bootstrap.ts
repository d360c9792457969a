/**
 * Bootstrap intervals for a ratio of two percentiles. A TTFT p99 over a thousand requests is set
 * by its ten slowest, so two runs' p99s differ by chance as much as by policy; the interval says
 * how far the ratio would move if the same runs had drawn other requests of the same kind.
 */
import { seededRandom } from "../core/random.ts";
import { percentileSorted } from "./percentile.ts";

/** A central interval of a bootstrap distribution. */
export interface Interval {
  low: number;
  high: number;
}

/** Options of {@link percentileRatioInterval}. */
export interface BootstrapOptions {
  /** Percentile compared, in [0, 100]. */
  p: number;
  /** Resamples drawn (each sample is resampled independently). */
  resamples?: number;
  /** Coverage of the interval, in (0, 1). */
  coverage?: number;
  seed?: number;
}

/**
 * Percentile-bootstrap interval of pth-percentile(treated) / pth-percentile(base): both samples are
 * resampled with replacement, independently, `resamples` times. NaN bounds when either is empty.
 */
export function percentileRatioInterval(
  base: ArrayLike<number>,
  treated: ArrayLike<number>,
  { p, resamples = 1000, coverage = 0.95, seed = 1 }: BootstrapOptions,
): Interval {
  if (base.length === 0 || treated.length === 0) return { low: Number.NaN, high: Number.NaN };
  const random = seededRandom(seed);
  const a = new Float64Array(base.length);
  const b = new Float64Array(treated.length);
  const ratios = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++)
    ratios[i] = resampledPercentile(treated, b, p, random) / resampledPercentile(base, a, p, random);
  return centralInterval(ratios, coverage);
}

/**
 * The same interval for paired samples: `base[i]` and `treated[i]` are one request under two
 * policies, and a resample draws requests, not values, so what both runs share (the trace's
 * arrivals, its long prompts) cancels out of the ratio. The arrays must have the same length.
 */
export function pairedPercentileRatioInterval(
  base: ArrayLike<number>,
  treated: ArrayLike<number>,
  { p, resamples = 1000, coverage = 0.95, seed = 1 }: BootstrapOptions,
): Interval {
  const n = base.length;
  if (treated.length !== n) throw new RangeError(`paired samples of ${n} and ${treated.length} values`);
  if (n === 0) return { low: Number.NaN, high: Number.NaN };
  const random = seededRandom(seed);
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  const ratios = new Float64Array(resamples);
  for (let i = 0; i < resamples; i++) {
    for (let j = 0; j < n; j++) {
      const k = Math.floor(random() * n);
      a[j] = base[k]!;
      b[j] = treated[k]!;
    }
    ratios[i] = percentileSorted(b.sort(), p) / percentileSorted(a.sort(), p);
  }
  return centralInterval(ratios, coverage);
}

/** The central `coverage` of `ratios` (sorted in place). */
function centralInterval(ratios: Float64Array, coverage: number): Interval {
  ratios.sort();
  const tail = ((1 - coverage) / 2) * 100;
  return { low: percentileSorted(ratios, tail), high: percentileSorted(ratios, 100 - tail) };
}

/** Fills `scratch` with a resample of `values` and returns its pth percentile. */
function resampledPercentile(
  values: ArrayLike<number>,
  scratch: Float64Array,
  p: number,
  random: () => number,
): number {
  const n = values.length;
  for (let i = 0; i < n; i++) scratch[i] = values[Math.floor(random() * n)]!;
  return percentileSorted(scratch.sort(), p);
}
