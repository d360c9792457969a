import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock } from "../../../core/clock.ts";
import type { PrefixMatchResult } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { instantiate } from "../testing.ts";
import { definition, type PrefixCacheAffinityFilter } from "./index.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));
const names = (list: readonly { metadata: { name: string } }[]) => list.map((e) => e.metadata.name);

/**
 * Matches out of 10 blocks of 64 tokens (640-token prompt) and in-flight tokens per endpoint,
 * those counted as prompts from scratch for the attention work (`prefillAttention`).
 */
function context(matches: number[], inFlightTokens: number[] = [0, 0, 0]) {
  const ctx = makeContext();
  const byEndpoint = new Map(
    endpoints.map((e, i) => [
      e.metadata.key,
      { matchBlocks: matches[i]!, totalBlocks: 10, blockSizeTokens: 64 },
    ]),
  );
  const match: PrefixMatchResult = {
    blockSizeTokens: 64,
    promptTokens: 640,
    hashes: new Float64Array(),
    byEndpoint,
  };
  ctx.state.set(attributeKey(PREFIX_CACHE_MATCH_INFO, "approx-prefix-cache-producer"), match);
  const loads = endpoints.map((e, i) => [
    e.metadata.key,
    {
      requests: 0,
      tokens: inFlightTokens[i]!,
      requestUncachedTokens: 640 - matches[i]! * 64,
      prefillAttention: inFlightTokens[i]! ** 2 / 2,
    },
  ]);
  ctx.state.set(inFlightStateKey("inflight-load-producer"), new Map(loads as never));
  return ctx;
}

test("defaults follow llm-d", () => {
  const p = definition.parameters.parse({});
  assert.equal(p.affinityThreshold, 0.8);
  assert.equal(p.explorationProbability, 0);
  assert.equal(p.maxTTFTPenaltyMs, 18000);
  assert.equal(p.ttftSource, "prefillThroughput");
  assert.equal(p.peakPrefillThroughput, 15928);
  assert.equal(p.escapeTo, "all");
});

test("keeps endpoints at or above the threshold; none sticky → all", () => {
  const filter = instantiate<PrefixCacheAffinityFilter>(definition);
  assert.deepEqual(names(filter.filter(context([8, 9, 2]), endpoints)), ["a", "b"]);
  assert.deepEqual(names(filter.filter(context([7, 0, 2]), endpoints)), ["a", "b", "c"]);
  assert.deepEqual(names(filter.filter(makeContext(), endpoints)), ["a", "b", "c"], "no match info");
});

test("breaks stickiness when the sticky endpoints are overloaded beyond the TTFT penalty", () => {
  const filter = instantiate<PrefixCacheAffinityFilter>(definition, { maxTTFTPenaltyMs: 1000 });
  // a: (15928 + 0)/15928 s = 1000 ms; c idle but 640 uncached tokens ≈ 40 ms → 960 ms gap: stick.
  assert.deepEqual(names(filter.filter(context([10, 0, 0], [15928, 0, 0]), endpoints)), ["a"]);
  // Twice the queue: gap ≈ 1960 ms > 1000 → all endpoints.
  assert.deepEqual(names(filter.filter(context([10, 0, 0], [31856, 0, 0]), endpoints)), ["a", "b", "c"]);
  const always = instantiate<PrefixCacheAffinityFilter>(definition, { maxTTFTPenaltyMs: 0 });
  assert.deepEqual(names(always.filter(context([10, 0, 0], [1e9, 0, 0]), endpoints)), ["a"]);
});

test("escapeTo fastest keeps only the endpoints within the penalty of the fastest", () => {
  const filter = instantiate<PrefixCacheAffinityFilter>(definition, {
    maxTTFTPenaltyMs: 1000,
    escapeTo: "fastest",
  });
  // a sticky but 2 s queued; b 8000 queued + its 576 uncached ≈ 540 ms, c its 576 ≈ 36 ms.
  const escaped = context([10, 1, 1], [31856, 8000, 0]);
  assert.deepEqual(names(filter.filter(escaped, endpoints)), ["b", "c"]);
  // b ≈ 1.08 s, more than the penalty behind c: only c starts soon enough.
  assert.deepEqual(names(filter.filter(context([10, 1, 1], [31856, 16600, 0]), endpoints)), ["c"]);
  // Within the penalty the filter sticks as llm-d's does.
  assert.deepEqual(names(filter.filter(context([10, 1, 1], [15928, 0, 0]), endpoints)), ["a"]);
});

test("escapeHeader lets only requests that carry the header escape", () => {
  const filter = instantiate<PrefixCacheAffinityFilter>(definition, {
    maxTTFTPenaltyMs: 1000,
    escapeTo: "fastest",
    escapeHeader: "X-Session-Id",
  });
  const busy = () => context([10, 1, 1], [31856, 8000, 0]);
  assert.deepEqual(names(filter.filter(busy(), endpoints)), ["a"], "anonymous: sticks");
  const ctx = busy();
  const named = { ...ctx, request: { ...ctx.request, headers: { "x-session-id": "s1" } } };
  assert.deepEqual(names(filter.filter(named, endpoints)), ["b", "c"]);
});

test("escapeTo idle escapes only to endpoints with nothing left to prefill, else sticks", () => {
  const filter = instantiate<PrefixCacheAffinityFilter>(definition, {
    maxTTFTPenaltyMs: 1000,
    escapeTo: "idle",
  });
  // a 2 s queued; b ≈ 0.54 s with 8000 queued; c idle (its own 576 tokens ≈ 36 ms): only c.
  assert.deepEqual(names(filter.filter(context([10, 1, 1], [31856, 8000, 0]), endpoints)), ["c"]);
  // No idle endpoint: moving the request would add its re-prefill to a busy one, so it stays.
  assert.deepEqual(names(filter.filter(context([10, 1, 1], [31856, 8000, 100]), endpoints)), ["a"]);
});

test("attentionContextTokens prices a prefill by the context it attends to", () => {
  const linear = { maxTTFTPenaltyMs: 1000, escapeTo: "fastest" as const, peakPrefillThroughput: 640 };
  const quadratic = instantiate<PrefixCacheAffinityFilter>(definition, {
    ...linear,
    attentionContextTokens: 320,
  });
  // a holds the 640-token prompt with 1,280 tokens queued; b and c would prefill all 640.
  const ctx = () => context([10, 0, 0], [1280, 0, 0]);
  // Linear: a 2 s, b and c 1 s each: 1 s behind is not more than the penalty, so stick.
  const byTokens = instantiate<PrefixCacheAffinityFilter>(definition, linear);
  assert.deepEqual(names(byTokens.filter(ctx(), endpoints)), ["a"]);
  // Priced by context: a's queue 2 s × (1 + 640/320) = 6 s; b and c 1 s × (1 + 320/320) = 2 s.
  assert.deepEqual(names(quadratic.filter(ctx(), endpoints)), ["b", "c"]);
  // a: its 640 queued 2 s + 64 new after 576 cached 0.29 s; b and c 640 from scratch 2 s: stick.
  const warm = context([9, 0, 0], [640, 0, 0]);
  assert.deepEqual(names(quadratic.filter(warm, endpoints)), ["a"]);
});

test("with attentionContextTokens the queue ahead is discounted by how long it has been prefilling", () => {
  const filter = instantiate<PrefixCacheAffinityFilter>(definition, {
    maxTTFTPenaltyMs: 1000,
    escapeTo: "fastest",
    peakPrefillThroughput: 640,
    attentionContextTokens: 320,
  });
  const ctx = context([10, 0, 0], [1280, 0, 0]);
  const loads = ctx.state.get(inFlightStateKey("inflight-load-producer")) as Map<string, object>;
  // a's 1,280 queued tokens are priced at 6 s; they started 4.5 s ago, so 1.5 s remain (b, c: 2 s).
  loads.set("default/a", { ...loads.get("default/a"), prefillSinceMs: 500 });
  const later = { ...ctx, clock: new ManualClock(5000) };
  assert.deepEqual(names(filter.filter(later, endpoints)), ["a"]);
});

test("explorationProbability draws from the environment's random source", () => {
  const explore = (draw: number) =>
    instantiate<PrefixCacheAffinityFilter>(
      definition,
      { explorationProbability: 0.1 },
      {
        ...makeEnv("prefix-cache-affinity-filter"),
        random: () => draw,
      },
    );
  assert.deepEqual(names(explore(0.05).filter(context([10, 0, 0]), endpoints)), ["a", "b", "c"]);
  assert.deepEqual(names(explore(0.5).filter(context([10, 0, 0]), endpoints)), ["a"]);
});
