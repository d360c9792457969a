import assert from "node:assert/strict";
import { test } from "node:test";
import { STAGED_PREFILL_STATE_KEY, type StagedPrefill } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import type { PreRequest, SchedulingResult } from "../../framework/types.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { instantiate, resultFor } from "../testing.ts";
import { definition, stageCuts } from "./index.ts";

const a = makeEndpoint("a");
const b = makeEndpoint("b");

test("cuts every stageTokens new tokens after the cached ones, aligned to 256, leaving the request half a stage", () => {
  assert.deepEqual(stageCuts(50_000, 0, 16_384), [16_384, 32_768]);
  assert.deepEqual(stageCuts(41_000, 0, 16_384), [16_384, 32_768]);
  assert.deepEqual(stageCuts(40_000, 0, 16_384), [16_384]);
  assert.deepEqual(stageCuts(60_000, 1_000, 16_384), [17_152, 33_536, 49_920]);
  assert.deepEqual(stageCuts(20_000, 0, 16_384), []);
});

/** Plans for a prompt of `length` exact tokens on `a`, with `queued` other tokens in flight there. */
function plan(
  length: number,
  uncached: number,
  options: { queued?: number; exact?: boolean; result?: SchedulingResult; kvUsage?: number } = {},
): StagedPrefill | undefined {
  const planner = instantiate<PreRequest>(definition, { stageTokens: 16_384, minUncachedTokens: 24_576 });
  const ctx = makeContext({ tokens: new Uint32Array(length), exactTokens: options.exact ?? true });
  const load = { requests: 0, tokens: options.queued ?? 0, requestUncachedTokens: uncached };
  ctx.state.set(inFlightStateKey("inflight-load-producer"), new Map([[a.metadata.key, load]]));
  a.metrics.kvCacheUsagePercent = options.kvUsage ?? 0.5;
  planner.preRequest(ctx, options.result ?? resultFor(a));
  return ctx.state.get(STAGED_PREFILL_STATE_KEY) as StagedPrefill | undefined;
}

test("a long cold prompt with exact tokens on an endpoint with nothing else to prefill is staged", () => {
  assert.deepEqual(plan(50_000, 50_000)?.cuts, [16_384, 32_768]);
  assert.deepEqual(plan(50_000, 30_000)?.cuts, [36_352], "cuts start after the cached prefix");
});

test("a completions prompt of text is staged by the router's estimate of its tokens", () => {
  const planner = instantiate<PreRequest>(definition, { stageTokens: 16_384, minUncachedTokens: 24_576 });
  const ctx = makeContext({ body: { prompt: "x" }, promptText: "word ".repeat(10_000) });
  const load = { requests: 0, tokens: 0, requestUncachedTokens: 12_500 };
  ctx.state.set(inFlightStateKey("inflight-load-producer"), new Map([[a.metadata.key, load]]));
  a.metrics.kvCacheUsagePercent = 0;
  planner.preRequest(ctx, resultFor(a));
  assert.equal(ctx.state.get(STAGED_PREFILL_STATE_KEY), undefined, "12,500 estimated tokens: too short");
  const long = makeContext({ body: { prompt: "x" }, promptText: "word ".repeat(40_000) });
  long.state.set(
    inFlightStateKey("inflight-load-producer"),
    new Map([[a.metadata.key, { ...load, requestUncachedTokens: 50_000 }]]),
  );
  planner.preRequest(long, resultFor(a));
  assert.deepEqual(long.state.get(STAGED_PREFILL_STATE_KEY), {
    cuts: [16_384, 32_768],
    promptTokens: 50_000,
    cachedTokens: 0,
  });
});

test("nothing is staged for estimated ids of a prompt that is not text, a short uncached part, a busy or KV-short endpoint, or two targets", () => {
  assert.equal(plan(50_000, 50_000, { exact: false }), undefined);
  assert.equal(plan(50_000, 20_000), undefined);
  assert.equal(plan(50_000, 50_000, { queued: 1 }), undefined);
  assert.equal(plan(50_000, 50_000, { kvUsage: 0.75 }), undefined);
  assert.ok(plan(50_000, 50_000, { kvUsage: 0.74 }));
  const pd: SchedulingResult = {
    primaryProfileName: "decode",
    profileResults: new Map([
      ["prefill", { targetEndpoints: [b], scored: [] }],
      ["decode", { targetEndpoints: [a], scored: [] }],
    ]),
  };
  assert.equal(plan(50_000, 50_000, { result: pd }), undefined);
});
