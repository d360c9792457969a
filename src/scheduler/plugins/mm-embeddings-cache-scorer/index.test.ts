import assert from "node:assert/strict";
import { test } from "node:test";
import { attributeKey, ENCODER_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { definition } from "./index.ts";

const scorer = definition.create({}, makeEnv("mm")) as Scorer;
const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));

test("matched items / total items; 0 without match information", () => {
  const ctx = makeContext();
  assert.deepEqual([...(scorer.score(ctx, endpoints) as Float64Array)], [0, 0, 0]);
  ctx.state.set(
    attributeKey(ENCODER_CACHE_MATCH_INFO),
    new Map([
      ["default/a", { matchedItems: 1, totalItems: 4 }],
      ["default/b", { matchedItems: 4, totalItems: 4 }],
    ]),
  );
  assert.deepEqual([...(scorer.score(ctx, endpoints) as Float64Array)], [0.25, 1, 0]);
});
