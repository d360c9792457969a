import assert from "node:assert/strict";
import { test } from "node:test";
import type { PrefixMatchResult } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { instantiate } from "../testing.ts";
import { definition, type PrefixCacheAffinityFilter } from "./index.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));
const names = (list: readonly { metadata: { name: string } }[]) => list.map((e) => e.metadata.name);

/** Matches out of 10 blocks of 64 tokens (640-token prompt) and in-flight tokens per endpoint. */
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
    { requests: 0, tokens: inFlightTokens[i]!, requestUncachedTokens: 640 - matches[i]! * 64 },
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
