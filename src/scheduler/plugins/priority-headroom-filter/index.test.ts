import assert from "node:assert/strict";
import { test } from "node:test";
import type { PrefixMatchResult } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Filter } from "../../framework/types.ts";
import { definition as affinityDefinition } from "../prefix-cache-affinity-filter/index.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { instantiate } from "../testing.ts";
import { definition } from "./index.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));
const names = (list: readonly { metadata: { name: string } }[]) => list.map((e) => e.metadata.name);

/** A request of `priority` seeing per-endpoint in-flight [requests, tokens, own uncached tokens]. */
function context(priority: number, loads: [number, number, number][]) {
  const ctx = makeContext({ priority });
  const snapshot = endpoints.map((e, i) => {
    const [requests, tokens, requestUncachedTokens] = loads[i]!;
    return [e.metadata.key, { requests, tokens, requestUncachedTokens }] as const;
  });
  ctx.state.set(inFlightStateKey("inflight-load-producer"), new Map(snapshot));
  return ctx;
}

const filter = (params: object = {}) =>
  definition.create(definition.parameters.parse(params), makeEnv("h")) as Filter;

test("defaults: priority ≥ 1, 64 requests, 6144 tokens", () => {
  const p = definition.parameters.parse({});
  assert.deepEqual(
    [p.minPriority, p.maxInFlightRequests, p.maxInFlightTokens, p.inFlightLoadProducerName],
    [1, 64, 6144, "inflight-load-producer"],
  );
});

test("requests below minPriority pass untouched", () => {
  const busy: [number, number, number][] = [
    [200, 0, 0],
    [0, 20000, 0],
    [1, 0, 0],
  ];
  const f = filter({ minPriority: 100 });
  assert.deepEqual(names(f.filter(context(99, busy), endpoints)), ["a", "b", "c"]);
  assert.deepEqual(names(f.filter(context(100, busy), endpoints)), ["c"]);
});

test("caps in-flight requests and in-flight plus own uncached tokens, inclusive", () => {
  const f = filter({ maxInFlightRequests: 10, maxInFlightTokens: 1000 });
  const ctx = context(5, [
    [10, 600, 400], // at both caps: kept
    [11, 0, 0], // one request too many
    [0, 601, 400], // 1001 tokens of prefill before its first token
  ]);
  assert.deepEqual(names(f.filter(ctx, endpoints)), ["a"]);
});

test("no endpoint with headroom: all pass", () => {
  const f = filter({ maxInFlightRequests: 1 });
  const ctx = context(5, [
    [2, 0, 0],
    [3, 0, 0],
    [4, 0, 0],
  ]);
  assert.deepEqual(names(f.filter(ctx, endpoints)), ["a", "b", "c"]);
});

test("ahead of prefix affinity: a high-priority conversation leaves its busy replica", () => {
  const ctx = context(100, [
    [300, 0, 100], // holds the conversation, decoding 300 requests
    [2, 0, 2000],
    [40, 9000, 2000],
  ]);
  const match: PrefixMatchResult = {
    blockSizeTokens: 100,
    promptTokens: 2100,
    hashes: new Float64Array(),
    byEndpoint: new Map([
      [endpoints[0]!.metadata.key, { matchBlocks: 20, totalBlocks: 21, blockSizeTokens: 100 }],
    ]),
  };
  ctx.state.set(attributeKey(PREFIX_CACHE_MATCH_INFO, "approx-prefix-cache-producer"), match);
  const affinity = instantiate<Filter>(affinityDefinition);
  assert.deepEqual(names(affinity.filter(ctx, endpoints)), ["a"], "affinity alone pins it");
  const kept = affinity.filter(ctx, filter().filter(ctx, endpoints));
  assert.deepEqual(names(kept), ["b"]);
});
