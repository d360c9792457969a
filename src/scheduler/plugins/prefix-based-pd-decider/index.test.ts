import assert from "node:assert/strict";
import { test } from "node:test";
import type { PrefixMatchResult } from "../../../kv-index/match-info.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Decider } from "../shared/decider.ts";
import { definition } from "./index.ts";

const decode = makeEndpoint("decode-0");

/** A context whose approx producer saw a `promptTokens`-token prompt, `cachedBlocks` × 16 cached on decode-0. */
function contextFor(promptTokens: number, cachedBlocks: number | undefined) {
  const ctx = makeContext({ promptText: "x".repeat(promptTokens * 4) });
  const byEndpoint = new Map();
  if (cachedBlocks !== undefined)
    byEndpoint.set(decode.metadata.key, { matchBlocks: cachedBlocks, totalBlocks: 64, blockSizeTokens: 16 });
  const match: PrefixMatchResult = {
    blockSizeTokens: 16,
    promptTokens,
    hashes: new Float64Array(64),
    byEndpoint,
  };
  ctx.state.set(attributeKey(PREFIX_CACHE_MATCH_INFO), match);
  return ctx;
}

const create = (params: unknown) =>
  definition.create(definition.parameters.parse(params), makeEnv("pd")) as Decider;

const CASES = [
  { name: "uncached 100 ≥ 16", params: { nonCachedTokens: 16 }, prompt: 100, cached: 0, want: true },
  {
    name: "uncached exactly the threshold",
    params: { nonCachedTokens: 16 },
    prompt: 80,
    cached: 4,
    want: true,
  },
  { name: "uncached 15 < 16", params: { nonCachedTokens: 16 }, prompt: 79, cached: 4, want: false },
  { name: "fully cached", params: { nonCachedTokens: 16 }, prompt: 64, cached: 4, want: false },
  {
    name: "nonCachedTokens 0 never disaggregates",
    params: { nonCachedTokens: 0 },
    prompt: 5000,
    cached: 0,
    want: false,
  },
  { name: "defaults: disabled", params: {}, prompt: 5000, cached: 0, want: false },
  {
    name: "no match info for the endpoint",
    params: { nonCachedTokens: 16 },
    prompt: 100,
    cached: undefined,
    want: false,
  },
  {
    name: "prompt below promptTokens",
    params: { nonCachedTokens: 16, promptTokens: 200 },
    prompt: 199,
    cached: 0,
    want: false,
  },
  {
    name: "prompt at promptTokens",
    params: { nonCachedTokens: 16, promptTokens: 200 },
    prompt: 200,
    cached: 0,
    want: true,
  },
  {
    name: "promptTokens passes, cache covers",
    params: { nonCachedTokens: 64, promptTokens: 100 },
    prompt: 300,
    cached: 15,
    want: false,
  },
];

for (const c of CASES) {
  test(`prefix-based-pd-decider: ${c.name} → ${c.want}`, () => {
    assert.equal(create(c.params).disaggregate(contextFor(c.prompt, c.cached), decode), c.want);
  });
}

test("without a decode endpoint or producer output it does not disaggregate", () => {
  const decider = create({ nonCachedTokens: 1 });
  assert.equal(decider.disaggregate(contextFor(100, 0), undefined), false);
  assert.equal(decider.disaggregate(makeContext({ promptText: "x".repeat(400) }), decode), false);
});

test("the host's token count wins over the producer's estimate", () => {
  const ctx = contextFor(10, 0);
  (ctx.request as { inputTokens?: number }).inputTokens = 500;
  assert.equal(create({ nonCachedTokens: 100 }).disaggregate(ctx, decode), true);
});

test("negative thresholds are config errors", () => {
  assert.equal(definition.parameters.safeParse({ nonCachedTokens: -1 }).success, false);
  assert.equal(definition.parameters.safeParse({ promptTokens: -5 }).success, false);
  assert.equal(definition.parameters.safeParse({ threshold: 5 }).success, false, "unknown field");
});
