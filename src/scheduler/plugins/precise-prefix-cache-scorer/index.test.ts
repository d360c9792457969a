import assert from "node:assert/strict";
import { test } from "node:test";
import { isHostedPlugin, isKvEventConsumer } from "../../framework/hosted.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { instantiate } from "../testing.ts";
import { definition } from "./index.ts";

test("scores the tier-weighted fraction of the prompt's blocks each endpoint's events show", () => {
  const scorer = instantiate<Scorer>(definition);
  assert.ok(isHostedPlugin(scorer) && isKvEventConsumer(scorer));
  const ids = Uint32Array.from({ length: 16 * 4 }, (_, i) => i + 1);
  const event = (blocks: number, medium: string) => ({
    type: "BlockStored" as const,
    blockHashes: Array.from({ length: blocks }, (_, i) => BigInt(i)),
    parentBlockHash: null,
    tokenIds: ids.subarray(0, blocks * 16),
    blockSize: 16,
    lora: null,
    medium,
  });
  scorer.kvEvents([event(4, "GPU")], "default/a", "m");
  scorer.kvEvents([event(2, "CPU")], "default/b", "m");
  const endpoints = [makeEndpoint("a"), makeEndpoint("b"), makeEndpoint("c")];
  const scores = scorer.score(makeContext({ model: "m", tokens: ids }), endpoints);
  assert.deepEqual(
    Array.from(scores, (s) => +s.toFixed(6)),
    [1, 0.4, 0],
  );
});
