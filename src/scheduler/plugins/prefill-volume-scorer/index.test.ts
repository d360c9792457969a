import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock } from "../../../core/clock.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { instantiate, resultFor } from "../testing.ts";
import { definition, type PrefillVolumeScorer } from "./index.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));

/** A context whose in-flight snapshot says the request would prefill `uncached[i]` tokens on endpoint i. */
function withUncached(...uncached: number[]) {
  const ctx = makeContext();
  const snapshot = new Map(
    uncached.map((tokens, i) => [
      endpoints[i]!.metadata.key,
      { requests: 0, tokens: 0, requestUncachedTokens: tokens },
    ]),
  );
  ctx.state.set(inFlightStateKey("inflight-load-producer"), snapshot);
  return ctx;
}

function scorerWith(clock: ManualClock, params: unknown = {}) {
  return instantiate<PrefillVolumeScorer>(definition, params, makeEnv("prefill-volume-scorer", {}, clock));
}

test("no history: every endpoint scores 1", () => {
  const scorer = scorerWith(new ManualClock());
  assert.deepEqual(Array.from(scorer.score(withUncached(5, 5, 5), endpoints)), [1, 1, 1]);
});

test("the endpoint given the request's uncached tokens scores lower, relative to the busiest", () => {
  const scorer = scorerWith(new ManualClock());
  scorer.preRequest(withUncached(1000, 4000, 4000), resultFor(endpoints[1]!));
  scorer.preRequest(withUncached(1000, 4000, 2000), resultFor(endpoints[2]!));
  assert.deepEqual(Array.from(scorer.score(withUncached(0, 0, 0), endpoints)), [1, 0, 0.5]);
});

test("volume halves every halfLifeSeconds, so old placements fade", () => {
  const clock = new ManualClock();
  const scorer = scorerWith(clock, { halfLifeSeconds: 10 });
  scorer.preRequest(withUncached(8000, 0, 0), resultFor(endpoints[0]!));
  clock.advance(20_000);
  assert.ok(Math.abs(scorer.volumeAt("default/a", clock.now()) - 2000) < 1e-6);
  scorer.preRequest(withUncached(0, 3000, 0), resultFor(endpoints[1]!));
  const [a, b, c] = Array.from(scorer.score(withUncached(0, 0, 0), endpoints));
  assert.equal(b, 0);
  assert.ok(Math.abs(a! - 1 / 3) < 1e-9, "a holds 2000 of the busiest 3000");
  assert.equal(c, 1);
});
