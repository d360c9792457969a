import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { IdealPrefixCache } from "./ideal-cache.ts";
import { maxOverMean, percentile } from "./percentile.ts";
import { LoadTimeline, newRecord, type RequestRecord } from "./records.ts";
import { summarize } from "./summary.ts";

function rec(
  id: string,
  arrival: number,
  first: number,
  end: number,
  input: number,
  output: number,
  cached: number,
  ideal: number,
): RequestRecord {
  const r = newRecord(id, "t", arrival, input);
  return {
    ...r,
    startMs: arrival,
    firstTokenMs: first,
    endMs: end,
    outputTokens: output,
    cachedTokens: cached,
    idealCachedTokens: ideal,
    endpoint: 0,
  };
}

describe("percentile (nearest rank)", () => {
  it("matches hand-computed ranks", () => {
    const v = [40, 10, 30, 20];
    assert.equal(percentile(v, 50), 20);
    assert.equal(percentile(v, 75), 30);
    assert.equal(percentile(v, 90), 40);
    assert.equal(percentile(v, 99), 40);
    assert.equal(percentile(v, 0), 10);
    assert.ok(Number.isNaN(percentile([], 50)));
  });
  it("load spread is max over mean", () => {
    assert.equal(maxOverMean([100, 300]), 1.5);
    assert.equal(maxOverMean([5, 5, 5]), 1);
  });
});

describe("IdealPrefixCache", () => {
  it("counts the leading run of seen segments in whole engine blocks, capped at L-1", () => {
    const cache = new IdealPrefixCache(16);
    const a = { ns: "x", id: 0, tokens: 512 };
    const b = { ns: "x", id: 1, tokens: 512 };
    assert.equal(cache.lookupAndInsert([a, b], 1024), 0);
    // the same prompt again: everything seen, but the last token is always recomputed → 1008
    assert.equal(cache.lookupAndInsert([a, b], 1024), 1008);
    assert.equal(cache.lookupAndInsert([a, b, { ns: "x", id: 2, tokens: 100 }], 1124), 1024);
    // b after a different first segment is a different chain: no hit past the first mismatch
    assert.equal(cache.lookupAndInsert([{ ns: "y", id: 0, tokens: 512 }, b], 1024), 0);
  });
});

describe("summarize", () => {
  // Three requests computed by hand: inputs 1000/2000/1000, cached 0/1500/500, ideal 0/1800/500.
  const records = [
    rec("a", 0, 100, 1100, 1000, 11, 0, 0),
    rec("b", 1000, 1300, 2300, 2000, 11, 1500, 1800),
    rec("c", 2000, 2050, 4050, 1000, 21, 500, 500),
  ];
  const ctx = {
    fromMs: 0,
    toMs: 10_000,
    slo: { ttftMs: 250, itlMs: 150 },
    gpuHourPrice: 3.6,
    gpus: 2,
    prefillByEndpoint: [1000, 3000],
  };

  it("computes hit rate, ideal ceiling and captured token-weighted", () => {
    const s = summarize(records, ctx);
    assert.equal(s.hitRate, 2000 / 4000);
    assert.equal(s.idealHitRate, 2300 / 4000);
    assert.equal(s.captured, 2000 / 2300);
    assert.equal(s.reuse90Share, 1 / 3); // only b: 1800 ≥ 0.9·2000
  });

  it("computes latency percentiles, goodput, spread and cost", () => {
    const s = summarize(records, ctx);
    assert.deepEqual(s.ttftMs, { p50: 100, p90: 300, p99: 300 }); // TTFTs 100, 300, 50
    assert.deepEqual(s.itlMs, { p50: 100, p90: 100, p99: 100 }); // (1000/10, 1000/10, 2000/20)
    assert.equal(s.goodputRps, 2 / 10); // a and c meet TTFT ≤ 250 ms
    assert.equal(s.sloAttainment, 2 / 3);
    assert.equal(s.loadSpread, 1.5);
    assert.equal(s.inputTokensPerS, 400);
    // 2 GPUs × $3.6/h × 10 s = $0.02 over 4,000 input tokens → $5 per million
    assert.ok(Math.abs(s.costPerMInput - 5) < 1e-9);
  });

  it("excludes warm-up arrivals and failed requests", () => {
    const failed = { ...rec("d", 3000, Number.NaN, Number.NaN, 5000, 0, 0, 0), error: "too-long" };
    const s = summarize([...records, failed], { ...ctx, fromMs: 500 });
    assert.equal(s.requests, 3);
    assert.equal(s.completed, 2);
    assert.equal(s.failed, 1);
    assert.equal(s.hitRate, 2000 / 3000);
  });

  it("LoadTimeline buckets per endpoint and totals a window", () => {
    const t = new LoadTimeline(1000, 2);
    t.add(0, 100, 10);
    t.add(1, 1500, 20);
    t.add(1, 2500, 40);
    assert.deepEqual([...t.totals()], [10, 60]);
    assert.deepEqual([...t.totals(1000, 2000)], [0, 20]);
  });
});
