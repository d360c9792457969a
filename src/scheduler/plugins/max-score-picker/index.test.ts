import assert from "node:assert/strict";
import { test } from "node:test";
import { attributeKey, IN_FLIGHT_LOAD } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Picker, ScoredEndpoint } from "../../framework/types.ts";
import { definition } from "./index.ts";

const picker = (maxNumOfEndpoints = 1) =>
  definition.create(
    definition.parameters.parse({ maxNumOfEndpoints }),
    makeEnv("max-score-picker"),
  ) as Picker;
const scoredOf = (scores: number[]): ScoredEndpoint[] =>
  scores.map((score, i) => ({ endpoint: makeEndpoint(`e${i}`), score }));
const names = (r: { targetEndpoints: { metadata: { name: string } }[] }) =>
  r.targetEndpoints.map((e) => e.metadata.name);

test("picks the highest score", () => {
  assert.deepEqual(names(picker().pick(makeContext(), scoredOf([0.2, 0.9, 0.5]))), ["e1"]);
});

test("maxNumOfEndpoints returns the top N best first", () => {
  assert.deepEqual(names(picker(2).pick(makeContext(), scoredOf([0.2, 0.9, 0.5]))), ["e1", "e2"]);
  assert.equal(picker(5).pick(makeContext(), scoredOf([0.2, 0.9])).targetEndpoints.length, 2);
});

test("defaults maxNumOfEndpoints to 1 and rejects 0", () => {
  assert.equal(definition.parameters.parse({}).maxNumOfEndpoints, 1);
  assert.equal(definition.parameters.safeParse({ maxNumOfEndpoints: 0 }).success, false);
});

test("score ties go to the least loaded endpoint", () => {
  const scored = scoredOf([1, 1, 1]);
  scored[0]!.endpoint.metrics.runningRequestsSize = 3;
  scored[1]!.endpoint.metrics.dispatchedSinceScrape = 1;
  scored[2]!.endpoint.metrics.waitingQueueSize = 2;
  assert.deepEqual(names(picker().pick(makeContext(), scored)), ["e1"]);
});

test("router in-flight counts win over scraped metrics when the producer ran", () => {
  const scored = scoredOf([1, 1]);
  scored[0]!.endpoint.metrics.runningRequestsSize = 9;
  const ctx = makeContext();
  const snapshot = new Map([
    ["default/e0", { requests: 0, tokens: 0 }],
    ["default/e1", { requests: 2, tokens: 0 }],
  ]);
  ctx.state.set(attributeKey(IN_FLIGHT_LOAD), snapshot);
  assert.deepEqual(names(picker().pick(ctx, scored)), ["e0"]);
});

test("a burst of equal-score requests spreads instead of piling onto one endpoint", () => {
  const p = picker();
  const counts = new Map<string, number>();
  const scored = scoredOf([0.7, 0.7, 0.7, 0.7]);
  for (let i = 0; i < 40; i++) {
    const [name] = names(p.pick(makeContext(), scored));
    counts.set(name!, (counts.get(name!) ?? 0) + 1);
  }
  assert.deepEqual([...counts.values()], [10, 10, 10, 10]);
});

test("a burst that bumps dispatchedSinceScrape stays balanced", () => {
  const p = picker();
  const scored = scoredOf([0.5, 0.5, 0.5]);
  for (let i = 0; i < 9; i++) {
    const target = p.pick(makeContext(), scored).targetEndpoints[0]!;
    target.metrics.dispatchedSinceScrape++;
  }
  assert.deepEqual(
    scored.map((s) => s.endpoint.metrics.dispatchedSinceScrape),
    [3, 3, 3],
  );
});

test("two pickers given the same sequence decide identically", () => {
  const [a, b] = [picker(), picker()];
  const scored = scoredOf([0.3, 0.3, 0.1]);
  const run = (p: Picker) => Array.from({ length: 6 }, () => names(p.pick(makeContext(), scored))[0]);
  assert.deepEqual(run(a), run(b));
});

test("profiles sharing one picker each rotate through their own ties", () => {
  const p = picker();
  const decode = scoredOf([0.5, 0.5]);
  const prefill = [0, 1].map((i) => ({ endpoint: makeEndpoint(`p${i}`), score: 0.5 }));
  const prefillPicks = Array.from({ length: 4 }, () => {
    p.pick(makeContext(), decode, "decode");
    return names(p.pick(makeContext(), prefill, "prefill"))[0];
  });
  assert.deepEqual(prefillPicks, ["p0", "p1", "p0", "p1"]);
});
