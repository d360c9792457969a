import assert from "node:assert/strict";
import { test } from "node:test";
import { seededRandom } from "../core/random.ts";
import { pairedPercentileRatioInterval, percentileRatioInterval } from "./bootstrap.ts";

const exponential = (n: number, meanMs: number, seed: number) => {
  const random = seededRandom(seed);
  return Array.from({ length: n }, () => -meanMs * Math.log(1 - random()));
};

test("samples of one distribution give an interval around 1", () => {
  const interval = percentileRatioInterval(exponential(2000, 100, 1), exponential(2000, 100, 2), { p: 99 });
  assert.ok(interval.low < 1 && interval.high > 1, JSON.stringify(interval));
  assert.ok(interval.high / interval.low < 1.6, JSON.stringify(interval));
});

test("a tail twice as long gives an interval around 2 that excludes 1", () => {
  const interval = percentileRatioInterval(exponential(2000, 100, 1), exponential(2000, 200, 2), { p: 99 });
  assert.ok(interval.low > 1.4 && interval.low < 2, JSON.stringify(interval));
  assert.ok(interval.high > 2 && interval.high < 2.8, JSON.stringify(interval));
});

test("fewer requests widen the interval", () => {
  const wide = percentileRatioInterval(exponential(200, 100, 3), exponential(200, 100, 4), { p: 99 });
  const narrow = percentileRatioInterval(exponential(5000, 100, 3), exponential(5000, 100, 4), { p: 99 });
  assert.ok(wide.high / wide.low > narrow.high / narrow.low);
});

test("the same seed gives the same interval; an empty sample gives NaN", () => {
  const a = exponential(500, 100, 5);
  const b = exponential(500, 120, 6);
  assert.deepEqual(percentileRatioInterval(a, b, { p: 99 }), percentileRatioInterval(a, b, { p: 99 }));
  assert.ok(Number.isNaN(percentileRatioInterval([], b, { p: 99 }).low));
});

test("paired: the same requests under both policies give exactly 1; a uniform slowdown gives its factor", () => {
  const base = exponential(1000, 100, 7);
  assert.deepEqual(pairedPercentileRatioInterval(base, base, { p: 99 }), { low: 1, high: 1 });
  const slower = base.map((v) => v * 1.1);
  const interval = pairedPercentileRatioInterval(base, slower, { p: 99 });
  assert.ok(
    Math.abs(interval.low - 1.1) < 1e-9 && Math.abs(interval.high - 1.1) < 1e-9,
    JSON.stringify(interval),
  );
});

test("paired: a shared tail narrows the interval against resampling each run on its own", () => {
  const base = exponential(2000, 100, 8);
  const noise = seededRandom(9);
  const treated = base.map((v) => v * (0.95 + 0.1 * noise()));
  const paired = pairedPercentileRatioInterval(base, treated, { p: 99 });
  const independent = percentileRatioInterval(base, treated, { p: 99 });
  assert.ok(paired.low <= 1 && paired.high >= 0.99, JSON.stringify(paired));
  assert.ok(paired.high - paired.low < (independent.high - independent.low) / 3);
  assert.throws(() => pairedPercentileRatioInterval(base, treated.slice(1), { p: 99 }), RangeError);
});
