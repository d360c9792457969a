import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { definition } from "./index.ts";

const scorer = definition.create({}, makeEnv("running-requests-size-scorer")) as Scorer;

test("min-max over running requests; all equal → 1", () => {
  const eps = [2, 10, 6].map((r, i) => makeEndpoint(`e${i}`, { metrics: { runningRequestsSize: r } }));
  assert.deepEqual(Array.from(scorer.score(makeContext(), eps)), [1, 0, 0.5]);
  const same = [4, 4].map((r, i) => makeEndpoint(`s${i}`, { metrics: { runningRequestsSize: r } }));
  assert.deepEqual(Array.from(scorer.score(makeContext(), same)), [1, 1]);
});
