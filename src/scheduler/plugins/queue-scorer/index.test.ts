import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { definition } from "./index.ts";

const scorer = definition.create({}, makeEnv("queue-scorer")) as Scorer;

test("min-max over waiting queue: shortest 1, longest 0, linear between", () => {
  const eps = [0, 5, 10].map((q, i) => makeEndpoint(`e${i}`, { metrics: { waitingQueueSize: q } }));
  assert.deepEqual(Array.from(scorer.score(makeContext(), eps)), [1, 0.5, 0]);
});

test("all equal queues score 1", () => {
  const eps = [3, 3].map((q, i) => makeEndpoint(`e${i}`, { metrics: { waitingQueueSize: q } }));
  assert.deepEqual(Array.from(scorer.score(makeContext(), eps)), [1, 1]);
});

test("requests dispatched since the last scrape count as queued", () => {
  const eps = [
    makeEndpoint("a", { metrics: { waitingQueueSize: 2, dispatchedSinceScrape: 4 } }),
    makeEndpoint("b", { metrics: { waitingQueueSize: 4 } }),
  ];
  assert.deepEqual(Array.from(scorer.score(makeContext(), eps)), [0, 1]);
});
