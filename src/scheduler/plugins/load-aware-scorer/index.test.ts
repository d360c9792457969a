import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { instantiate } from "../testing.ts";
import { definition, loadAwareScore } from "./index.ts";

test("empty queue 0.5, linear down to 0 at the threshold (default 128)", () => {
  const table: [number, number][] = [
    [0, 0.5],
    [32, 0.375],
    [64, 0.25],
    [127, 0.5 * (1 - 127 / 128)],
    [128, 0],
    [500, 0],
  ];
  for (const [q, want] of table) assert.equal(loadAwareScore(q, 128), want, `q=${q}`);
  const scorer = instantiate<Scorer>(definition, { threshold: 10 });
  const endpoints = [0, 5, 10].map((q) => makeEndpoint(`e${q}`, { metrics: { waitingQueueSize: q } }));
  assert.deepEqual(Array.from(scorer.score(makeContext(), endpoints)), [0.5, 0.25, 0]);
  assert.throws(() => definition.parameters.parse({ threshold: 0 }));
});
