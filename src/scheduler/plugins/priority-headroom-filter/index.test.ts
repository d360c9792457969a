import assert from "node:assert/strict";
import { test } from "node:test";
import type { PrefixMatchResult } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Filter, PreRequest, ResponseHooks } from "../../framework/types.ts";
import { definition as affinityDefinition } from "../prefix-cache-affinity-filter/index.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { instantiate, resultFor } from "../testing.ts";
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

test("no endpoint with headroom: the least pressure passes, ties together", () => {
  const f = filter({ maxInFlightRequests: 10, maxInFlightTokens: 1000 });
  const ctx = context(5, [
    [30, 0, 0], // pressure 3 (requests)
    [12, 1500, 500], // pressure 2 (tokens): fewer requests is not enough
    [20, 0, 0], // pressure 2 (requests): tied
  ]);
  assert.deepEqual(names(f.filter(ctx, endpoints)), ["b", "c"]);
});

test("zero caps: only idle endpoints have headroom; all pass when none is idle", () => {
  const f = filter({ maxInFlightRequests: 0, maxInFlightTokens: 0 });
  const idle = context(5, [
    [1, 0, 0],
    [0, 0, 0],
    [0, 5, 0],
  ]);
  assert.deepEqual(names(f.filter(idle, endpoints)), ["b"]);
  const busy = context(5, [
    [1, 0, 0],
    [2, 0, 0],
    [0, 5, 0],
  ]);
  assert.deepEqual(names(f.filter(busy, endpoints)), ["a", "b", "c"]);
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

/** A request of `priority` seeing only in-flight request counts on a, b, c. */
const seeing = (priority: number, a = 0, b = 0, c = 0) =>
  context(priority, [
    [a, 0, 0],
    [b, 0, 0],
    [c, 0, 0],
  ]);

test("shield: lower priorities skip endpoints serving high priority once past the cap", () => {
  const f = filter({ minPriority: 100, shieldMaxInFlightRequests: 3 }) as Filter & PreRequest & ResponseHooks;
  const [a, b] = [endpoints[0]!, endpoints[1]!];
  const chats = [seeing(100), seeing(100)];
  for (const chat of chats) f.preRequest(chat, resultFor(a));
  f.preRequest(seeing(100), resultFor(b));
  const agent = (...counts: number[]) => names(f.filter(seeing(0, ...counts), endpoints));
  // a and b serve high priority and a 4th request would pass the cap of 3; c serves none.
  assert.deepEqual(agent(3, 3, 9), ["c"]);
  assert.deepEqual(agent(2, 3, 9), ["a", "c"], "a stays open up to the cap");
  assert.deepEqual(agent(3, 1, 0), ["b", "c"], "b: 1 of 1 is high, but under the cap");
  const chat = names(f.filter(seeing(100, 3, 3, 9), endpoints));
  assert.deepEqual(chat, ["a", "b", "c"], "the shield never applies to high priority");
  // A response ends once, however often it is reported: a keeps one high-priority request.
  f.onResponseComplete?.(chats[0]!, a, "natural", undefined);
  f.onResponseComplete?.(chats[0]!, a, "natural", undefined);
  assert.deepEqual(agent(3, 3, 9), ["c"]);
  f.onResponseComplete?.(chats[1]!, a, "natural", undefined);
  assert.deepEqual(agent(4, 4, 9), ["a", "c"], "a serves no high priority any more");
});

test("shield: when every endpoint is shut, the fewest high-priority requests pass; unset, nothing is counted", () => {
  const f = filter({ minPriority: 100, shieldMaxInFlightRequests: 0 }) as Filter & PreRequest;
  for (const e of [...endpoints, endpoints[0]!]) f.preRequest(seeing(100), resultFor(e));
  assert.deepEqual(names(f.filter(seeing(0, 1, 1, 1), endpoints)), ["b", "c"]);
  const unset = filter({ minPriority: 100 }) as Filter & PreRequest;
  const chat = seeing(100);
  unset.preRequest(chat, resultFor(endpoints[0]!));
  assert.equal(chat.state.size, 1, "only the load snapshot: no ledger without a shield or packing");
  assert.deepEqual(names(unset.filter(seeing(0, 1, 9, 9), endpoints)), ["a", "b", "c"]);
});

test("packHighPriority: high priority keeps the endpoints already serving it while they have headroom", () => {
  const f = filter({ minPriority: 100, packHighPriority: true }) as Filter & PreRequest & ResponseHooks;
  const chat = (...counts: number[]) => names(f.filter(seeing(100, ...counts), endpoints));
  assert.deepEqual(chat(0, 0, 0), ["a", "b", "c"], "none serves chat yet: all with headroom");
  const first = seeing(100);
  f.preRequest(first, resultFor(endpoints[1]!));
  assert.deepEqual(chat(0, 1, 0), ["b"]);
  assert.deepEqual(chat(0, 65, 0), ["a", "c"], "b is past its cap: open another");
  assert.deepEqual(
    names(f.filter(seeing(0, 0, 1, 0), endpoints)),
    ["a", "b", "c"],
    "no shield: lower priority untouched",
  );
  f.onResponseComplete?.(first, endpoints[1]!, "natural", undefined);
  assert.deepEqual(chat(0, 0, 0), ["a", "b", "c"]);
  const plain = filter({ minPriority: 100 }) as Filter & PreRequest;
  plain.preRequest(seeing(100), resultFor(endpoints[1]!));
  assert.deepEqual(names(plain.filter(seeing(100, 0, 1, 0), endpoints)), ["a", "b", "c"], "off by default");
});
