import assert from "node:assert/strict";
import { test } from "node:test";
import { readPrefixMatch } from "../../../kv-index/index.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import { definition, type BurstPrefixCacheProducer } from "./index.ts";

const make = (params: unknown = {}) =>
  definition.create(
    definition.parameters.parse(params),
    makeEnv(definition.type),
  ) as BurstPrefixCacheProducer;
const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));
/** 64-token blocks of 4 characters per token: 256 characters a block. */
const rollout = (seed: string) => `${seed} solve the task step by step. `.repeat(40);

/** Produces `prompts` concurrently (one window) → per request, the endpoint with the full match or "-". */
async function burst(p: BurstPrefixCacheProducer, prompts: string[]): Promise<string[]> {
  const ctxs = prompts.map((promptText, i) => makeContext({ requestId: `r${i}`, promptText }));
  await Promise.all(ctxs.map((ctx) => p.produce(ctx, endpoints)));
  return ctxs.map((ctx) => {
    const match = readPrefixMatch(ctx.state, p.stateKey)!;
    const full = [...match.byEndpoint].filter(
      ([, info]) => info.matchBlocks > 0 && info.matchBlocks === info.totalBlocks,
    );
    return full.length === 1 ? full[0]![0].split("/")[1]! : "-";
  });
}

test("the samples of a rollout group wait for the window and match one replica fully", async () => {
  const p = make({ windowDurationMs: 20 });
  const placed = await burst(p, [
    rollout("A"),
    rollout("B"),
    rollout("A"),
    rollout("A"),
    rollout("B"),
    "lonely",
  ]);
  assert.equal(new Set([placed[0], placed[2], placed[3]]).size, 1, `group A together: ${placed}`);
  assert.equal(placed[1], placed[4], "group B together");
  assert.notEqual(placed[0], placed[1], "two groups, two replicas");
  assert.equal(placed[5], "-", "a request sharing nothing gets no affinity");
});

test("maxPerReplica spreads a group k per replica; the next window starts fresh", async () => {
  const p = make({ windowDurationMs: 10, maxPerReplica: 2 });
  const placed = await burst(
    p,
    Array.from({ length: 6 }, () => rollout("G")),
  );
  assert.deepEqual(
    [...new Set(placed)].map((e) => placed.filter((x) => x === e).length),
    [2, 2, 2],
  );
  const again = await burst(p, [rollout("H")]);
  assert.deepEqual(again, ["-"], "alone in its window");
});

test("past maxBatchSize a request does not wait and gets no match", async () => {
  const p = make({ windowDurationMs: 20, maxBatchSize: 2 });
  const ctxs = [0, 1, 2].map((i) => makeContext({ requestId: `r${i}`, promptText: rollout("A") }));
  const pending = ctxs.map((ctx) => p.produce(ctx, endpoints));
  assert.equal(pending[2], undefined);
  await Promise.all(pending);
  assert.equal(readPrefixMatch(ctxs[2]!.state, p.stateKey), undefined);
  assert.ok(readPrefixMatch(ctxs[0]!.state, p.stateKey));
});

test("parameters: llm-d's names, defaults and bounds", () => {
  assert.deepEqual(definition.parameters.parse({}), {
    windowDurationMs: 100,
    maxPerReplica: -1,
    blockSizeTokens: 64,
    maxPrefixTokensToMatch: 0,
    minColocateBlocks: 0,
    maxBatchSize: 1000,
  });
  for (const bad of [
    { windowDurationMs: 0 },
    { maxPerReplica: 0 },
    { maxBatchSize: -2 },
    { minColocateBlocks: -1 },
  ])
    assert.ok(!definition.parameters.safeParse(bad).success, JSON.stringify(bad));
});
