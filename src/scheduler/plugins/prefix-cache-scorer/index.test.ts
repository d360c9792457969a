import assert from "node:assert/strict";
import { test } from "node:test";
import type { PrefixMatchResult } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import {
  type ApproxPrefixCacheProducer,
  definition as producerDefinition,
} from "../approx-prefix-cache-producer/index.ts";
import { instantiate, resultFor } from "../testing.ts";
import { definition, type PrefixCacheScorer } from "./index.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));

function contextWithMatches(
  matches: Record<string, number>,
  totalBlocks = 10,
  producer = "approx-prefix-cache-producer",
) {
  const ctx = makeContext();
  const byEndpoint = new Map(
    Object.entries(matches).map(([name, matchBlocks]) => [
      `default/${name}`,
      { matchBlocks, totalBlocks, blockSizeTokens: 64 },
    ]),
  );
  const result: PrefixMatchResult = {
    blockSizeTokens: 64,
    promptTokens: 640,
    hashes: new Float64Array(),
    byEndpoint,
  };
  ctx.state.set(attributeKey(PREFIX_CACHE_MATCH_INFO, producer), result);
  return ctx;
}

test("score is matched blocks over total blocks; missing info scores 0", () => {
  const scorer = instantiate<PrefixCacheScorer>(definition);
  assert.equal(scorer.category, "affinity");
  assert.deepEqual(Array.from(scorer.score(contextWithMatches({ a: 10, b: 5 }), endpoints)), [1, 0.5, 0]);
  assert.deepEqual(Array.from(scorer.score(makeContext(), endpoints)), [0, 0, 0]);
});

test("matchLengthWeight blends in the squared absolute match length", () => {
  const scorer = instantiate<PrefixCacheScorer>(definition, {
    matchLengthWeight: 0.5,
    matchLengthScaleTokens: 1280,
  });
  // b: 5 blocks × 64 = 320 tokens → (320/1280)² = 0.0625; ratio 0.5 → 0.5·0.0625 + 0.5·0.5
  const [a, b] = scorer.score(contextWithMatches({ a: 10, b: 5 }), endpoints);
  assert.equal(a, 0.5 * (640 / 1280) ** 2 + 0.5);
  assert.equal(b, 0.5 * 0.0625 + 0.25);
});

test("reads the producer named by prefixMatchInfoProducerName", () => {
  const scorer = instantiate<PrefixCacheScorer>(definition, { prefixMatchInfoProducerName: "precise" });
  assert.deepEqual(
    Array.from(scorer.score(contextWithMatches({ c: 4 }, 8, "precise"), endpoints)),
    [0, 0, 0.5],
  );
  assert.deepEqual(Array.from(scorer.score(contextWithMatches({ c: 4 }), endpoints)), [0, 0, 0]);
});

test("requests sharing a prefix score highest on the endpoint that served the prefix", () => {
  const producer = instantiate<ApproxPrefixCacheProducer>(producerDefinition);
  const scorer = instantiate<PrefixCacheScorer>(definition);
  const shared = "You are a helpful assistant. ".repeat(200);
  const first = makeContext({ promptText: `${shared}What is 2+2?` });
  producer.produce(first, endpoints);
  producer.preRequest(first, resultFor(endpoints[1]!));
  const second = makeContext({ promptText: `${shared}Tell me a story.` });
  producer.produce(second, endpoints);
  const scores = Array.from(scorer.score(second, endpoints));
  assert.ok(scores[1]! > 0.9 && scores[0] === 0 && scores[2] === 0, `scores ${scores}`);
});
