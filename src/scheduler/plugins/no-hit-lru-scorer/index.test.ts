import assert from "node:assert/strict";
import { test } from "node:test";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PrefixMatchResult } from "../../../kv-index/index.ts";
import { attributeKey, IN_FLIGHT_LOAD, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import { definition as prefixScorerDefinition } from "../prefix-cache-scorer/index.ts";
import { instantiate, resultFor } from "../testing.ts";
import { definition, type NoHitLruScorer } from "./index.ts";

const endpoints = ["a", "b", "c", "d"].map((n) => makeEndpoint(n));

function context(matches: number[] = [0, 0, 0, 0], producer = "approx-prefix-cache-producer") {
  const ctx = makeContext();
  const byEndpoint = new Map(
    endpoints.map((e, i) => [
      e.metadata.key,
      { matchBlocks: matches[i]!, totalBlocks: 4, blockSizeTokens: 64 },
    ]),
  );
  const match: PrefixMatchResult = {
    blockSizeTokens: 64,
    promptTokens: 256,
    hashes: new Float64Array(),
    byEndpoint,
  };
  ctx.state.set(attributeKey(PREFIX_CACHE_MATCH_INFO, producer), match);
  return ctx;
}

function coldRequestTo(scorer: NoHitLruScorer, endpoint: Endpoint) {
  const ctx = context();
  scorer.score(ctx, endpoints);
  scorer.preRequest(ctx, resultFor(endpoint));
}

test("warm requests score 0.5 everywhere and do not touch the LRU", () => {
  const scorer = instantiate<NoHitLruScorer>(definition);
  const ctx = context([0, 2, 0, 0]);
  assert.deepEqual(Array.from(scorer.score(ctx, endpoints)), [0.5, 0.5, 0.5, 0.5]);
  scorer.preRequest(ctx, resultFor(endpoints[1]!));
  assert.deepEqual(Array.from(scorer.score(context(), endpoints)), [1, 1, 1, 1]);
});

test("cold requests prefer never-used, then least recently used endpoints", () => {
  const scorer = instantiate<NoHitLruScorer>(definition);
  coldRequestTo(scorer, endpoints[0]!);
  coldRequestTo(scorer, endpoints[1]!);
  const [a, b, c, d] = Array.from(scorer.score(context(), endpoints));
  assert.equal(c, 1);
  assert.equal(d, 1);
  assert.ok(a! > b!, "a was used longer ago than b");
  assert.ok(a! < 1);
  coldRequestTo(scorer, endpoints[0]!);
  const again = Array.from(scorer.score(context(), endpoints));
  assert.ok(again[1]! > again[0]!, "a is now the most recent");
});

test("lruSize bounds the memory: the oldest endpoint is forgotten (scores as never used)", () => {
  const scorer = instantiate<NoHitLruScorer>(definition, { lruSize: 2 });
  for (const e of endpoints.slice(0, 3)) coldRequestTo(scorer, e);
  const [a, b, c] = Array.from(scorer.score(context(), endpoints));
  assert.equal(a, 1);
  assert.ok(b! > c! && c! > 0);
});

test("prefixPluginName resolves to the prefix scorer's producer", () => {
  const prefixScorer = prefixScorerDefinition.create(
    prefixScorerDefinition.parameters.parse({ prefixMatchInfoProducerName: "precise" }),
    makeEnv("prefix-cache-scorer"),
  );
  const scorer = instantiate<NoHitLruScorer>(
    definition,
    {},
    makeEnv("no-hit-lru-scorer", { "prefix-cache-scorer": prefixScorer }),
  );
  assert.deepEqual(
    Array.from(scorer.score(context([0, 3, 0, 0], "precise"), endpoints)),
    [0.5, 0.5, 0.5, 0.5],
  );
});

test("coldMatchRatio: a prompt no candidate holds that fraction of counts as cold and enters the LRU", () => {
  const scorer = instantiate<NoHitLruScorer>(definition, { coldMatchRatio: 0.75 });
  const sharedOnly = context([2, 2, 2, 2]);
  assert.deepEqual(Array.from(scorer.score(sharedOnly, endpoints)), [1, 1, 1, 1]);
  scorer.preRequest(sharedOnly, resultFor(endpoints[2]!));
  const [a, , c] = Array.from(scorer.score(context([2, 2, 2, 2]), endpoints));
  assert.ok(c! < a!, "c took the last cold request");
  assert.deepEqual(Array.from(scorer.score(context([0, 3, 0, 0]), endpoints)), [0.5, 0.5, 0.5, 0.5]);
});

test("coldMatchRatio: a partial match only one endpoint holds keeps the request warm", () => {
  const scorer = instantiate<NoHitLruScorer>(definition, { coldMatchRatio: 1 });
  assert.deepEqual(Array.from(scorer.score(context([2, 1, 1, 1]), endpoints)), [0.5, 0.5, 0.5, 0.5]);
  const tolerant = instantiate<NoHitLruScorer>(definition, { coldMatchRatio: 1, coldMaxAdvantage: 0.25 });
  assert.deepEqual(Array.from(tolerant.score(context([2, 1, 1, 1]), endpoints)), [1, 1, 1, 1]);
});

test("coldMatchRatio 0 (llm-d): any held block makes a request warm", () => {
  const scorer = instantiate<NoHitLruScorer>(definition);
  assert.deepEqual(Array.from(scorer.score(context([1, 0, 0, 0]), endpoints)), [0.5, 0.5, 0.5, 0.5]);
});

function withLoads(ctx: ReturnType<typeof context>, tokens: number[], producer = "inflight-load-producer") {
  const snapshot = new Map(
    endpoints.map((e, i) => [
      e.metadata.key,
      { tokens: tokens[i]!, requests: 1, requestUncachedTokens: 256 },
    ]),
  );
  ctx.state.set(attributeKey(IN_FLIGHT_LOAD, producer), snapshot);
  return ctx;
}

test("coldLoadMargin: a cold request's rotation skips endpoints busier than the least loaded by more than the margin", () => {
  const scorer = instantiate<NoHitLruScorer>(definition, { coldLoadMargin: 1000 });
  const [a, b, c, d] = Array.from(scorer.score(withLoads(context(), [5000, 900, 0, 1000]), endpoints));
  assert.equal(a, 0, "a is 5000 tokens busier than c");
  assert.deepEqual([b, c, d], [1, 1, 1], "within 1000 tokens of the least loaded");
  coldRequestTo(scorer, endpoints[2]!);
  const [, , cAfter, dAfter] = Array.from(
    scorer.score(withLoads(context(), [5000, 900, 0, 1000]), endpoints),
  );
  assert.ok(cAfter! > 0 && cAfter! < dAfter!, "c stays eligible, ranked by recency");
});

test("coldLoadMargin leaves warm requests neutral and does nothing without a load snapshot", () => {
  const scorer = instantiate<NoHitLruScorer>(definition, { coldLoadMargin: 0 });
  assert.deepEqual(
    Array.from(scorer.score(withLoads(context([0, 2, 0, 0]), [9000, 0, 0, 0]), endpoints)),
    [0.5, 0.5, 0.5, 0.5],
  );
  assert.deepEqual(Array.from(scorer.score(context(), endpoints)), [1, 1, 1, 1]);
});

test("coldLoadMargin reads the producer named by inFlightLoadProducerName; unset (llm-d) ignores load", () => {
  const named = instantiate<NoHitLruScorer>(definition, {
    coldLoadMargin: 0,
    inFlightLoadProducerName: "load",
  });
  const loaded = () => withLoads(context(), [0, 10, 0, 0], "load");
  assert.deepEqual(Array.from(named.score(loaded(), endpoints)), [1, 0, 1, 1]);
  const llmd = instantiate<NoHitLruScorer>(definition);
  assert.deepEqual(Array.from(llmd.score(withLoads(context(), [0, 10, 0, 0]), endpoints)), [1, 1, 1, 1]);
});

test("coldLoadMarginExemptHeader: a request naming its session rotates over every candidate", () => {
  const scorer = instantiate<NoHitLruScorer>(definition, {
    coldLoadMargin: 100,
    coldLoadMarginExemptHeader: "X-Session-Id",
  });
  const loaded = (headers: Record<string, string>) => {
    const ctx = withLoads(context(), [0, 600, 0, 0]);
    return { ...ctx, request: { ...ctx.request, headers } };
  };
  assert.deepEqual(Array.from(scorer.score(loaded({ "x-session-id": "s1" }), endpoints)), [1, 1, 1, 1]);
  assert.deepEqual(
    Array.from(scorer.score(loaded({}), endpoints)),
    [1, 0, 1, 1],
    "anonymous: margin applies",
  );
});
