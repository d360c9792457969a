import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock } from "../../../core/clock.ts";
import { type IndexKvEvent, matchRatio, readPrefixMatch } from "../../../kv-index/index.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import {
  type ApproxPrefixCacheProducer,
  definition as approxDefinition,
} from "../approx-prefix-cache-producer/index.ts";
import { instantiate, resultFor } from "../testing.ts";
import {
  definition,
  type PrecisePrefixCacheProducer,
  SpeculativePrecisePrefixCacheProducer,
} from "./index.ts";

const endpoints = [makeEndpoint("a"), makeEndpoint("b")];
const tokens = (n: number, salt = 0) =>
  Uint32Array.from({ length: n }, (_, i) => (i * 31 + salt * 977) % 30_000);

/** One BlockStored of `ids` in engine blocks of 16 tokens (engine hashes of its own). */
function stored(ids: Uint32Array, medium = "GPU", base = 0n): IndexKvEvent {
  const blocks = Math.floor(ids.length / 16);
  return {
    type: "BlockStored",
    blockHashes: Array.from({ length: blocks }, (_, i) => base + BigInt(i)),
    parentBlockHash: null,
    tokenIds: ids.subarray(0, blocks * 16),
    blockSize: 16,
    lora: null,
    medium,
  };
}

function produce(producer: PrecisePrefixCacheProducer, ids: Uint32Array, clock = new ManualClock()) {
  const ctx = makeContext({ model: "m", tokens: ids }, clock);
  producer.produce(ctx, endpoints);
  return { ctx, match: readPrefixMatch(ctx.state, producer.stateKey)! };
}

test("llm-d's parameters and defaults; unimplemented backends are refused", () => {
  const params = definition.parameters.parse({});
  assert.equal(params.speculativeIndexing, false);
  assert.equal(params.speculativeTTL, 2000);
  assert.equal(params.kvEventsConfig.podDiscoveryConfig.socketPort, 5557);
  assert.deepEqual(params.indexerConfig.kvCacheBackendConfigs, [
    { name: "gpu", weight: 1 },
    { name: "cpu", weight: 0.8 },
  ]);
  assert.throws(() => definition.parameters.parse({ tokenProcessorConfig: { hashAlgorithm: "xxh64" } }));
  assert.throws(() =>
    definition.parameters.parse({ indexerConfig: { kvBlockIndexConfig: { redisConfig: {} } } }),
  );
  assert.throws(() => definition.parameters.parse({ kvEventsConfig: { unknown: 1 } }));
});

test("matches what an endpoint's events show, weighted by tier", () => {
  const producer = instantiate<PrecisePrefixCacheProducer>(definition, {
    tokenProcessorConfig: { blockSize: 64 },
  });
  const prompt = tokens(64 * 6 + 10);
  producer.kvEvents([stored(prompt)], "default/a", "m");
  producer.kvEvents([stored(prompt.subarray(0, 128), "CPU", 100n)], "default/b", "m");
  const { match } = produce(producer, prompt);
  assert.deepEqual(match.byEndpoint.get("default/a"), {
    matchBlocks: 6,
    totalBlocks: 7, // the 10-token tail counts as a block no engine holds
    blockSizeTokens: 64,
    weightedMatchBlocks: 6,
  });
  assert.equal(match.byEndpoint.get("default/b")!.matchBlocks, 2);
  assert.ok(Math.abs(match.byEndpoint.get("default/b")!.weightedMatchBlocks! - 1.6) < 1e-9);
});

test("a prompt half held up to its partial tail is under half matched, as the approximate producer counts it", () => {
  const producer = instantiate<PrecisePrefixCacheProducer>(definition, {
    tokenProcessorConfig: { blockSize: 64 },
  });
  const prompt = tokens(64 * 16 + 11, 3); // a Mooncake prompt: 512 shared tokens of 1,035
  producer.kvEvents([stored(prompt.subarray(0, 64 * 8))], "default/a", "m");
  const info = produce(producer, prompt).match.byEndpoint.get("default/a");
  assert.equal(info!.matchBlocks, 8);
  assert.ok(matchRatio(info) < 0.5, `ratio ${matchRatio(info)}`);
  const approx = instantiate<ApproxPrefixCacheProducer>(approxDefinition, { blockSizeTokens: 64 });
  const ctx = makeContext({ model: "m", tokens: prompt });
  approx.produce(ctx, endpoints);
  const counted = readPrefixMatch(ctx.state, approx.stateKey)!.byEndpoint.get("default/a")!;
  assert.equal(info!.totalBlocks, counted.totalBlocks, "both producers count the same blocks");
});

test("keys are computed only as far as a match can reach", () => {
  const producer = instantiate<PrecisePrefixCacheProducer>(definition);
  const long = tokens(16 * 1000, 1);
  assert.equal(produce(producer, long).match.hashes.length, 0, "no endpoint is known");
  producer.kvEvents([stored(tokens(16 * 10, 9))], "default/b", "m");
  assert.equal(produce(producer, long).match.hashes.length, 1, "nobody holds its first block");
  producer.kvEvents([stored(long.subarray(0, 16 * 100))], "default/a", "m");
  const { match } = produce(producer, long);
  assert.equal(match.byEndpoint.get("default/a")!.matchBlocks, 100);
  assert.equal(match.byEndpoint.get("default/a")!.totalBlocks, 1000);
  assert.equal(match.hashes.length, 101, "the matched blocks and the first one nobody holds");
});

test("with speculativeIndexing a decision marks the prompt on the chosen endpoint until the TTL", () => {
  const clock = new ManualClock(0);
  const producer = instantiate<SpeculativePrecisePrefixCacheProducer>(
    definition,
    { speculativeIndexing: true, speculativeTTL: "2s" },
    makeEnv("precise-prefix-cache-producer", {}, clock),
  );
  const prompt = tokens(16 * 50, 2);
  assert.ok(
    producer instanceof SpeculativePrecisePrefixCacheProducer,
    "a PreRequest only with speculativeIndexing",
  );
  producer.preRequest(produce(producer, prompt, clock).ctx, resultFor(endpoints[1]!));
  clock.advance(1999);
  assert.equal(produce(producer, prompt, clock).match.byEndpoint.get("default/b")!.matchBlocks, 50);
  clock.advance(1);
  assert.equal(produce(producer, prompt, clock).match.byEndpoint.get("default/b")!.matchBlocks, 0);
});

test("the prompt text is tokenized once, into request.tokens, and an endpoint leaving the pool is forgotten", () => {
  const producer = instantiate<PrecisePrefixCacheProducer>(definition);
  const ctx = makeContext({ model: "m", promptText: "abcd".repeat(64) });
  producer.produce(ctx, endpoints);
  assert.equal(ctx.request.tokens?.length, 64);
  producer.kvEvents([stored(ctx.request.tokens!)], "default/a", "m");
  producer.endpointsChanged(endpoints);
  assert.equal(producer.cache.index.stats().holders, 4);
  producer.endpointsChanged([endpoints[1]!]);
  assert.equal(producer.cache.index.stats().holders, 0);
});

test("started, the producer yields after matching a prompt of 32K tokens or more; not started, it never does", async () => {
  const producer = instantiate<PrecisePrefixCacheProducer>(definition);
  const run = (n: number) => producer.produce(makeContext({ model: "m", tokens: tokens(n) }), endpoints);
  assert.equal(
    run(40_000),
    undefined,
    "the fleet simulator's host starts no plugin and decides synchronously",
  );
  await producer.start();
  try {
    assert.equal(run(1_000), undefined, "a short prompt goes on at once");
    const pending = run(40_000);
    assert.ok(pending instanceof Promise);
    await pending;
  } finally {
    await producer.close();
  }
});

test("started, what a decision left to key speculatively is keyed in idle event-loop turns; not started, only by later index calls", async () => {
  const turn = () => new Promise((resolve) => setImmediate(resolve));
  const prompt = tokens(16 * 3000, 3); // 3,000 blocks; a decision keys the first 1,024
  for (const started of [false, true]) {
    const producer = instantiate<SpeculativePrecisePrefixCacheProducer>(definition, {
      speculativeIndexing: true,
    });
    const index = producer.cache.index;
    if (started) await producer.start();
    try {
      producer.preRequest(produce(producer, prompt).ctx, resultFor(endpoints[0]!));
      const left = index.pendingSpeculativeBlocks;
      assert.equal(left, 3000 - 1024);
      const pending = producer
        .metrics()
        .find((m) => m.name === "llm_d_epp_kv_cache_speculative_pending_blocks")!;
      assert.equal(pending.value(), left, "the backlog's gauge");
      for (let i = 0; i < 4; i++) await turn();
      assert.equal(index.pendingSpeculativeBlocks, started ? 0 : left, `started: ${started}`);
    } finally {
      if (started) await producer.close();
    }
  }
});
