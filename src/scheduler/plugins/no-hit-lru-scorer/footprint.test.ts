import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock } from "../../../core/clock.ts";
import type { PrefixMatchResult } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import { instantiate, resultFor } from "../testing.ts";
import { SessionFootprints } from "./footprint.ts";
import { definition, type NoHitLruParams, type NoHitLruScorer } from "./index.ts";

test("footprints: a session counts its largest prompt on each endpoint it ran on, until idle past the window", () => {
  const f = new SessionFootprints(1000);
  const run = (session: string, endpoint: string, tokens: number, atMs: number) => {
    f.record(session, endpoint, tokens, atMs);
    f.complete(session, endpoint, atMs);
  };
  run("s1", "a", 100, 0);
  run("s2", "a", 50, 100);
  run("s1", "b", 30, 200); // a sub-agent of s1 elsewhere: a still holds s1's context
  run("s1", "a", 80, 300); // a smaller prompt (a sub-agent on a) does not shrink it
  assert.equal(f.of("a", 300), 150);
  assert.equal(f.of("a", 300, "s1"), 50, "a session's own share is left out");
  assert.equal(f.of("b", 300), 30);
  assert.equal(f.of("a", 1101), 100, "s2 idle since 100 is gone");
  assert.equal(f.of("b", 1201), 0);
  assert.equal(f.of("a", 1301), 0);
  assert.equal(f.size, 0);
});

test("footprints: a request still running keeps its session counted; the window starts at completion", () => {
  const f = new SessionFootprints(1000);
  f.record("s1", "a", 100, 0);
  assert.equal(f.of("a", 5000), 100, "queued or running for 5 s");
  f.complete("s1", "a", 5000);
  assert.equal(f.of("a", 6000), 100);
  assert.equal(f.of("a", 6001), 0);
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

/** Scores a cold request, sends it to `to` (default: the best score) and completes it. */
function place(scorer: NoHitLruScorer, session: string, tokens: number, clock: ManualClock, to?: number) {
  const ctx = coldRequest(session, tokens, clock);
  const scores = Array.from(scorer.score(ctx, endpoints));
  const endpoint = endpoints[to ?? scores.indexOf(Math.max(...scores))]!;
  scorer.preRequest(ctx, resultFor(endpoint));
  scorer.onResponseComplete(ctx, endpoint);
  return scores;
}

/** Footprints a: 900, b: 300, c: 100, d: 0 (sessions placed by hand). */
function loaded(params: Partial<NoHitLruParams>, clock = new ManualClock()) {
  const scorer = instantiate<NoHitLruScorer>(definition, { coldPlacement: "footprint", ...params });
  place(scorer, "big", 900, clock, 0);
  place(scorer, "mid", 300, clock, 1);
  place(scorer, "small", 100, clock, 2);
  return scorer;
}

const best = (scores: number[]) => scores.indexOf(Math.max(...scores));

test("coldPlacement footprint: a new session goes where live sessions hold the least KV, never where it does not fit", () => {
  const clock = new ManualClock();
  const scores = place(loaded({}, clock), "new", 200, clock);
  assert.equal(scores[0], 0, "900 + 200 > 1000");
  assert.equal(best(scores), 3, "d holds the least");
  assert.ok(scores[1]! < scores[2]! && scores[2]! < scores[3]!, "then c (100), then b (300)");
});

test("coldPlacement footprint: fitting nowhere, recency decides while the fleet has room; past it, the fullest endpoint takes it", () => {
  const clock = new ManualClock();
  const scorer = loaded({}, clock); // a 900, b 300, c 100, d 0: 1,300 of 4,000
  const scattered = place(scorer, "wide", 950, clock, 3); // fits only on d
  assert.equal(best(scattered), 3);
  // now a 900, b 300, c 100, d 950; 920 fits nowhere, but 3,170 < 4,000: recency decides, as
  // without footprints (a took a cold request longest ago)
  assert.equal(best(place(scorer, "late", 920, clock)), 0); // a: 1,820, past its KV
  // 4,120 > 4,000 with this one: the fleet is past its KV, so a (the fullest) takes it, where
  // recency would choose b
  const full = place(scorer, "later", 950, clock);
  assert.deepEqual([best(full), full[1], full[2], full[3]], [0, 0, 0, 0]);
});

test("footprints expire: sessions idle past footprintIdleSeconds free their endpoint", () => {
  const clock = new ManualClock();
  const scorer = loaded({ footprintIdleSeconds: 60 }, clock);
  clock.advance(61_000);
  const scores = place(scorer, "new", 200, clock);
  assert.ok(scores[0]! > 0, "a's 900 tokens expired, so the session fits there again");
});

test("anonymous requests and the default coldPlacement keep the recency rotation", () => {
  const clock = new ManualClock();
  const lru = instantiate<NoHitLruScorer>(definition);
  const footprint = instantiate<NoHitLruScorer>(definition, { coldPlacement: "footprint" });
  for (const s of [lru, footprint]) place(s, "big", 900, clock, 0);
  const anonymous = (s: NoHitLruScorer) => {
    const ctx = coldRequest("", 200, clock);
    return Array.from(s.score(ctx, endpoints));
  };
  assert.deepEqual(anonymous(footprint), anonymous(lru));
  assert.equal(place(lru, "new", 200, clock)[0]! > 0, true, "recency alone ignores the footprint");
});
