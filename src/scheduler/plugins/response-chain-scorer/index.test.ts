import assert from "node:assert/strict";
import { test } from "node:test";
import {
  attributeKey,
  PREFIX_CACHE_MATCH_INFO,
  PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE,
} from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { definition } from "./index.ts";

const scorer = definition.create(definition.parameters.parse({}), makeEnv("response-chain-scorer")) as Scorer;

function scores(previous: string | undefined, waiting = 0, kv = 0.1): number[] {
  const endpoints = ["a", "b", "c"].map((k) =>
    makeEndpoint(k, {
      metrics: { waitingQueueSize: k === "b" ? waiting : 0, kvCacheUsagePercent: k === "b" ? kv : 0.1 },
    }),
  );
  const ctx = makeContext({});
  if (previous !== undefined)
    ctx.request.attributes.set(
      PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE,
      endpoints.find((e) => e.metadata.name === previous)?.metadata.key ?? previous,
    );
  return Array.from(scorer.score(ctx, endpoints));
}

test("the previous turn's endpoint scores 1, the others 0", () => {
  assert.deepEqual(scores("b"), [0, 1, 0]);
});

test("no chain, a gone endpoint or a saturated one: no preference", () => {
  assert.deepEqual(scores(undefined), [0, 0, 0]);
  assert.deepEqual(scores("default/gone"), [0, 0, 0]);
  assert.deepEqual(scores("b", 5), [0, 0, 0]);
  assert.deepEqual(scores("b", 0, 0.95), [0, 0, 0]);
  assert.deepEqual(scores("b", 4, 0.94), [0, 1, 0]);
});

test("silent where this router's prefix index already places the prompt", () => {
  const endpoints = ["a", "b"].map((k) => makeEndpoint(k));
  const ctx = makeContext({});
  ctx.request.attributes.set(PREVIOUS_RESPONSE_ENDPOINT_ATTRIBUTE, "default/b");
  const match = (blocks: number) =>
    new Map([["default/a", { matchBlocks: blocks, totalBlocks: 10, blockSizeTokens: 16 }]]);
  ctx.state.set(attributeKey(PREFIX_CACHE_MATCH_INFO), { byEndpoint: match(5), hashes: [] });
  assert.deepEqual(Array.from(scorer.score(ctx, endpoints)), [0, 0]);
  ctx.state.set(attributeKey(PREFIX_CACHE_MATCH_INFO), { byEndpoint: match(4), hashes: [] });
  assert.deepEqual(Array.from(scorer.score(ctx, endpoints)), [0, 1]);
});
