import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock } from "../../../core/clock.ts";
import type { PrefixMatchResult } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import { instantiate, resultFor } from "../testing.ts";
import { SessionFootprints } from "./footprint.ts";
import { definition, type NoHitLruScorer } from "./index.ts";

test("footprints: a session counts once, where it last ran, until idle past the limit", () => {
  const f = new SessionFootprints(1000);
  f.record("s1", "a", 100, 0);
  f.record("s2", "a", 50, 100);
  f.record("s1", "b", 120, 200); // s1 moved and grew
  assert.equal(f.of("a", 300), 50);
  assert.equal(f.of("b", 300), 120);
  // s2 idle since 100: gone after 1100; s1 (last at 200) stays until 1200
  assert.equal(f.of("a", 1101), 0);
  assert.equal(f.of("b", 1101), 120);
  assert.equal(f.of("b", 1201), 0);
  assert.equal(f.size, 0);
});

/** 4 endpoints of 1,000 KV tokens each (10 blocks of 100). */
const endpoints = ["a", "b", "c", "d"].map((n) =>
  makeEndpoint(n, { metrics: { cacheBlockSize: 100, cacheNumBlocks: 10 } }),
);

function coldRequest(session: string, tokens: number, clock: ManualClock) {
  const ctx = makeContext({ headers: { "x-session-id": session }, inputTokens: tokens }, clock);
  const byEndpoint = new Map(
    endpoints.map((e) => [e.metadata.key, { matchBlocks: 0, totalBlocks: 4, blockSizeTokens: 64 }]),
  );
  const match: PrefixMatchResult = {
    blockSizeTokens: 64,
    promptTokens: tokens,
    hashes: new Float64Array(),
    byEndpoint,
  };
  ctx.state.set(attributeKey(PREFIX_CACHE_MATCH_INFO, "approx-prefix-cache-producer"), match);
  return ctx;
}

function place(scorer: NoHitLruScorer, session: string, tokens: number, clock: ManualClock): number[] {
  const ctx = coldRequest(session, tokens, clock);
  const scores = Array.from(scorer.score(ctx, endpoints));
  const best = scores.indexOf(Math.max(...scores));
  scorer.preRequest(ctx, resultFor(endpoints[best]!));
  return scores;
}

test("coldPlacement footprint: a new session goes where live sessions hold the least KV and it fits", () => {
  const clock = new ManualClock();
  const scorer = instantiate<NoHitLruScorer>(definition, { coldPlacement: "footprint" });
  place(scorer, "big", 900, clock); // → a (all empty: recency decides)
  place(scorer, "s2", 100, clock); // → b
  place(scorer, "s3", 100, clock); // → c
  place(scorer, "s4", 100, clock); // → d
  // by count every endpoint has one session; by KV, a is nearly full, so a fifth session of 200
  // tokens does not fit there and scores 0
  const scores = place(scorer, "s5", 200, clock);
  assert.equal(scores[0], 0);
  assert.ok(scores[1]! > 0 && scores[2]! > 0 && scores[3]! > 0);
  // with plain recency, a (used longest ago) would have been first
  const lru = instantiate<NoHitLruScorer>(definition);
  for (const [s, t] of [
    ["big", 900],
    ["s2", 100],
    ["s3", 100],
    ["s4", 100],
  ] as const)
    place(lru, s, t, clock);
  const lruScores = place(lru, "s5", 200, clock);
  assert.equal(lruScores.indexOf(Math.max(...lruScores)), 0);
});

test("coldPlacement footprint: past the fleet's KV the recency rotation decides", () => {
  const clock = new ManualClock();
  const scorer = instantiate<NoHitLruScorer>(definition, { coldPlacement: "footprint" });
  for (const [i, e] of endpoints.entries()) {
    const ctx = coldRequest(`s${i}`, 950, clock);
    scorer.score(ctx, endpoints);
    scorer.preRequest(ctx, resultFor(e));
  }
  const withFootprint = place(scorer, "late", 500, clock);
  const lru = instantiate<NoHitLruScorer>(definition);
  for (const [i, e] of endpoints.entries()) {
    const ctx = coldRequest(`s${i}`, 950, clock);
    lru.score(ctx, endpoints);
    lru.preRequest(ctx, resultFor(e));
  }
  assert.deepEqual(withFootprint, place(lru, "late", 500, clock));
});
