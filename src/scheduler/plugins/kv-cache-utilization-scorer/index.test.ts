import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { definition } from "./index.ts";

test("score is 1 − KV-cache utilisation", () => {
  const scorer = definition.create({}, makeEnv("kv-cache-utilization-scorer")) as Scorer;
  const eps = [0, 0.25, 1].map((u, i) => makeEndpoint(`e${i}`, { metrics: { kvCacheUsagePercent: u } }));
  assert.deepEqual(Array.from(scorer.score(makeContext(), eps)), [1, 0.75, 0]);
});
