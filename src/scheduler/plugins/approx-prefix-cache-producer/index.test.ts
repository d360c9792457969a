import assert from "node:assert/strict";
import { test } from "node:test";
import { BodyBuffers } from "../../../api/body-buffers.ts";
import { renderChat } from "../../../api/prompt.ts";
import { BodyBudget } from "../../../api/request-body.ts";
import {
  hashTextBlocks,
  type PrefixMatchResult,
  prefixSeed,
  readPrefixMatch,
} from "../../../kv-index/index.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import { instantiate, resultFor } from "../testing.ts";
import type { TerminationCause } from "../../framework/types.ts";
import {
  type ApproxPrefixCacheProducer,
  definition,
  type LearningApproxPrefixCacheProducer,
} from "./index.ts";

const SYSTEM = "s".repeat(64 * 4 * 10); // 10 blocks of 64 tokens
const endpoints = [makeEndpoint("a"), makeEndpoint("b"), makeEndpoint("c")];

function schedule(producer: ApproxPrefixCacheProducer, prompt: string, pick = endpoints[0]!, model = "m") {
  const ctx = makeContext({ promptText: prompt, model });
  producer.produce(ctx, endpoints);
  producer.preRequest(ctx, resultFor(pick));
  return readPrefixMatch(ctx.state, producer.stateKey) as PrefixMatchResult;
}

const matchOn = (m: PrefixMatchResult, name: string) => m.byEndpoint.get(`default/${name}`)!.matchBlocks;

test("defaults follow llm-d; block size is floored at 64 tokens", () => {
  const params = definition.parameters.parse({});
  assert.deepEqual(params, {
    autoTune: true,
    blockSizeTokens: 16,
    maxPrefixBlocksToMatch: 2048,
    maxPrefixTokensToMatch: 131072,
    lruCapacityPerServer: 31250,
    learnCapacityFromCachedTokens: false,
  });
  const producer = instantiate<ApproxPrefixCacheProducer>(definition);
  assert.equal(producer.blockSizeFor(endpoints), 64);
  assert.throws(() => definition.parameters.parse({ blockSizeTokens: -1 }));
  assert.throws(() => definition.parameters.parse({ unknownField: 1 }));
});

test("a prompt sharing a prefix matches on the endpoint that served it, contiguously", () => {
  const producer = instantiate<ApproxPrefixCacheProducer>(definition);
  const first = schedule(producer, `${SYSTEM}question one`, endpoints[1]);
  assert.equal(first.hashes.length, 11);
  assert.deepEqual([matchOn(first, "a"), matchOn(first, "b")], [0, 0]);
  const second = schedule(producer, `${SYSTEM}question two, longer`, endpoints[2]);
  assert.equal(matchOn(second, "b"), 10);
  assert.equal(matchOn(second, "a"), 0);
  assert.equal(second.byEndpoint.get("default/b")!.totalBlocks, 11);
  assert.equal(second.byEndpoint.get("default/b")!.blockSizeTokens, 64);
});

test("model and cache_salt isolate prefixes", () => {
  const producer = instantiate<ApproxPrefixCacheProducer>(definition);
  schedule(producer, SYSTEM, endpoints[0], "m1");
  assert.equal(matchOn(schedule(producer, SYSTEM, endpoints[1], "m2"), "a"), 0);
  const ctx = makeContext({ promptText: SYSTEM, model: "m1", body: { cache_salt: "tenant-x" } });
  producer.produce(ctx, endpoints);
  assert.equal(matchOn(readPrefixMatch(ctx.state, producer.stateKey)!, "a"), 0);
});

test("the per-endpoint LRU evicts old prefixes at lruCapacityPerServer", () => {
  const producer = instantiate<ApproxPrefixCacheProducer>(definition, {
    lruCapacityPerServer: 15,
    autoTune: false,
  });
  const a = endpoints[0]!;
  schedule(producer, "x".repeat(64 * 4 * 10), a);
  schedule(producer, "y".repeat(64 * 4 * 10), a);
  assert.equal(producer.index.entries("default/a"), 15);
  // x's tail blocks went first; its 5 leading blocks survive, y's 10 are all there.
  assert.equal(matchOn(schedule(producer, "x".repeat(64 * 4 * 10), endpoints[1]), "a"), 5);
});

test("autoTune takes block size (floored at 64) and capacity in index blocks from metrics", () => {
  const producer = instantiate<ApproxPrefixCacheProducer>(definition);
  const tuned = [
    makeEndpoint("a", { metrics: { cacheBlockSize: 16, cacheNumBlocks: 64 } }), // 1024 tokens = 16 blocks of 64
    makeEndpoint("b", { metrics: { cacheBlockSize: 128, cacheNumBlocks: 10 } }),
  ];
  assert.equal(producer.blockSizeFor(tuned), 128);
  assert.equal(producer.blockSizeFor([tuned[0]!]), 64);
  producer.produce(makeContext({ promptText: "z" }), [tuned[0]!]);
  assert.equal(producer.index.capacity("default/a"), 16);
  const fixed = instantiate<ApproxPrefixCacheProducer>(definition, { autoTune: false });
  fixed.produce(makeContext({ promptText: "z" }), [tuned[0]!]);
  assert.equal(fixed.index.capacity("default/a"), 31250);
  assert.equal(fixed.blockSizeFor(tuned), 64);
});

test("learnCapacityFromCachedTokens: answers reusing more than predicted grow the endpoint's LRU, less shrink it", () => {
  const producer = instantiate<LearningApproxPrefixCacheProducer>(definition, {
    learnCapacityFromCachedTokens: true,
  });
  const a = makeEndpoint("a", { metrics: { cacheBlockSize: 16, cacheNumBlocks: 640 } }); // 160 blocks of 64
  const prompt = "k".repeat(64 * 4 * 10); // 10 blocks, none predicted cached
  const answer = (cachedTokens: number, cause: TerminationCause = "natural") => {
    const ctx = makeContext({ promptText: prompt });
    producer.produce(ctx, [a]);
    producer.onResponseComplete(ctx, a, cause, { promptTokens: 640, completionTokens: 1, cachedTokens });
    return producer.index.capacity("default/a");
  };
  assert.equal(answer(0), 160, "as predicted: unchanged");
  assert.equal(answer(600), 168, "a lower tier kept it: +5%");
  assert.equal(answer(600, "error"), 168, "only natural ends count");
  // Sent to a: the index predicts all 10 blocks there; the engine reused none.
  const held = makeContext({ promptText: prompt });
  producer.produce(held, [a]);
  producer.preRequest(held, resultFor(a));
  const next = makeContext({ promptText: prompt });
  producer.produce(next, [a]);
  producer.onResponseComplete(next, a, "natural", {
    promptTokens: 640,
    completionTokens: 1,
    cachedTokens: 0,
  });
  assert.equal(producer.index.capacity("default/a"), 160, "held less than sent: back by 5%");
  const plain = instantiate<ApproxPrefixCacheProducer>(definition);
  assert.equal("onResponseComplete" in plain, false, "off by default: no response hook");
});

test("maxPrefixTokensToMatch caps the blocks; 0 falls back to maxPrefixBlocksToMatch", () => {
  const capped = instantiate<ApproxPrefixCacheProducer>(definition, { maxPrefixTokensToMatch: 256 });
  assert.equal(schedule(capped, "q".repeat(64 * 4 * 10)).hashes.length, 4);
  const byBlocks = instantiate<ApproxPrefixCacheProducer>(definition, {
    maxPrefixTokensToMatch: 0,
    maxPrefixBlocksToMatch: 3,
  });
  assert.equal(schedule(byBlocks, "q".repeat(64 * 4 * 10)).hashes.length, 3);
});

test("hashes the text without tokenizing; tokens already on the request are used instead", () => {
  const producer = instantiate<ApproxPrefixCacheProducer>(definition);
  const ctx = makeContext({ promptText: "abcdefgh".repeat(40) }); // 80 tokens: 2 blocks of 64
  producer.produce(ctx, endpoints);
  assert.equal(ctx.request.tokens, undefined);
  const fromText = readPrefixMatch(ctx.state, producer.stateKey)!;
  assert.deepEqual([fromText.promptTokens, fromText.hashes.length], [80, 2]);
  const preset = makeContext({ promptText: "ignored", tokens: new Uint32Array(130) });
  producer.produce(preset, endpoints);
  const fromTokens = readPrefixMatch(preset.state, producer.stateKey)!;
  assert.deepEqual([fromTokens.promptTokens, fromTokens.hashes.length], [130, 3]);
});

test("a chat is hashed from its messages in place, with the keys of its rendered promptText", () => {
  const producer = instantiate<ApproxPrefixCacheProducer>(definition);
  const messages = [
    { role: "system", content: SYSTEM },
    {
      role: "user",
      content: [
        { type: "text", text: "part one, " },
        { type: "text", text: "part two" },
      ],
    },
  ];
  const keysOf = (request: Parameters<typeof makeContext>[0]) => {
    const ctx = makeContext(request);
    producer.produce(ctx, endpoints);
    return readPrefixMatch(ctx.state, producer.stateKey)!.hashes;
  };
  const promptText = renderChat(messages);
  const chat = keysOf({ path: "/v1/chat/completions", promptText, body: { messages } });
  assert.deepEqual(chat, keysOf({ promptText }));
  assert.equal(chat.length, Math.ceil(promptText.length / 256));
  // A gateway rendering differently (here: any other text) is hashed from its promptText.
  const other = `${promptText}!`;
  assert.deepEqual(
    keysOf({ path: "/v1/chat/completions", promptText: other, body: { messages } }),
    keysOf({ promptText: other }),
  );
});

test("a long prompt no endpoint holds is hashed past its first 64 blocks only for its insert, with the same keys and matches", () => {
  const producer = instantiate<ApproxPrefixCacheProducer>(definition, { maxPrefixTokensToMatch: 1 << 20 });
  const block = (i: number) => `${i}`.padEnd(256, ".");
  const prompt = (from: number, blocks: number) =>
    Array.from({ length: blocks }, (_, i) => block(from + i)).join("");
  const long = prompt(0, 300);
  const cold = schedule(producer, long, endpoints[1]);
  assert.equal(cold.hashes.length, 64, "probed only");
  assert.equal(cold.byEndpoint.get("default/b")!.totalBlocks, 300);
  const allKeys = hashTextBlocks(long, 64, 1 << 14, prefixSeed("m"));
  assert.deepEqual(cold.hashes, allKeys.subarray(0, 64));
  // The insert held the whole prompt: the same prompt again matches all of it, hashed whole.
  const warm = schedule(producer, long, endpoints[2]);
  assert.deepEqual([matchOn(warm, "b"), warm.hashes.length], [300, 300]);
  assert.deepEqual(warm.hashes, allKeys);
  // Sharing 100 blocks and then diverging: hashed whole (all 64 probed blocks match), matched 100.
  const forked = schedule(producer, long.slice(0, 100 * 256) + prompt(1000, 200), endpoints[0]);
  assert.deepEqual([matchOn(forked, "b"), matchOn(forked, "c"), forked.hashes.length], [100, 100, 300]);
  // Sharing 10 blocks: the probe decides, 10 matched.
  const early = schedule(producer, long.slice(0, 10 * 256) + prompt(2000, 290), endpoints[0]);
  assert.deepEqual([matchOn(early, "b"), matchOn(early, "a"), early.hashes.length], [10, 10, 64]);
});

test("a long prompt's deferred insert holds its body's reused receive buffer until the index applied it", () => {
  const producer = instantiate<ApproxPrefixCacheProducer>(definition);
  const buffers = new BodyBuffers();
  const lease = new BodyBudget(16 * 1024 * 1024, buffers).lease();
  const prompt = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(256, ".")).join("");
  const raw = lease.receiveBuffer(prompt.length);
  raw.write(prompt, "latin1");
  // The gateway's request: the prompt as the body's bytes, the lease as their holder.
  const ctx = makeContext({ promptText: prompt, promptParts: [raw], bodyHolder: lease });
  producer.produce(ctx, endpoints);
  producer.preRequest(ctx, resultFor(endpoints[0]!));
  lease.release();
  const next = buffers.take(raw.length);
  assert.notEqual(next.buffer, raw.buffer, "not handed to the next body before the insert ran");
  assert.equal(producer.index.entries("default/a"), 100, "the insert, applied at the index's next read");
  assert.equal(buffers.take(raw.length).buffer, raw.buffer, "handed out once the insert ran");
  next.fill(0x21);
  assert.equal(matchOn(schedule(producer, prompt, endpoints[1]), "a"), 100, "the prompt's own keys");
});

test("started, the producer hashes a long held text prompt in halves and yields after hashing 32K tokens or more; not started, it never does", async () => {
  const params = { maxPrefixTokensToMatch: 1_048_576, autoTune: false, blockSizeTokens: 64 };
  const producer = instantiate<ApproxPrefixCacheProducer>(definition, params);
  const long = (n: number) => `${"q".repeat(4 * n - 3)}end`; // n tokens of text
  const run = (prompt: string) => {
    const ctx = makeContext({ promptText: prompt, model: "m" });
    return { ctx, done: producer.produce(ctx, endpoints) };
  };
  for (const n of [40_000, 100_001]) {
    const held = run(long(n));
    assert.equal(
      held.done,
      undefined,
      "the fleet simulator's host starts no plugin and decides synchronously",
    );
    producer.preRequest(held.ctx, resultFor(endpoints[0]!));
  }
  await producer.start();
  try {
    assert.equal(run("q".repeat(4 * 1_000)).done, undefined, "a short prompt goes on at once");
    const unheld = `${"z".repeat(4 * 64 * 64)}${long(40_000)}`;
    assert.equal(run(unheld).done, undefined, "only its probe hashed: nobody holds it");
    for (const n of [40_000, 100_001]) {
      const { ctx, done } = run(long(n));
      assert.ok(done instanceof Promise, `${n} tokens: hashed whole, then the loop turns`);
      assert.equal(
        readPrefixMatch(ctx.state, producer.stateKey) === undefined,
        n >= 65_536,
        `${n} tokens: matched ${n >= 65_536 ? "after the second half, a turn later" : "at once"}`,
      );
      await done;
      const match = readPrefixMatch(ctx.state, producer.stateKey) as PrefixMatchResult;
      const want = hashTextBlocks(long(n), 64, Number.POSITIVE_INFINITY, prefixSeed("m"));
      assert.deepEqual([...match.hashes], [...want], `${n} tokens: the keys of one pass`);
      assert.equal(matchOn(match, "a"), want.length);
    }
  } finally {
    await producer.close();
  }
});
