import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv, seededRandom } from "../../framework/testing.ts";
import type { Picker, ScoredEndpoint } from "../../framework/types.ts";
import { definition } from "./index.ts";

const make = (maxNumOfEndpoints: number, seed: number) => {
  const env = { ...makeEnv("weighted-random-picker"), random: seededRandom(seed) };
  return definition.create(definition.parameters.parse({ maxNumOfEndpoints }), env) as Picker;
};
const scoredOf = (scores: number[]): ScoredEndpoint[] =>
  scores.map((score, i) => ({ endpoint: makeEndpoint(`e${i}`), score }));
const frequencies = (p: Picker, scored: ScoredEndpoint[], n: number) => {
  const counts = new Array(scored.length).fill(0);
  for (let i = 0; i < n; i++) {
    const picked = p.pick(makeContext(), scored).targetEndpoints[0];
    counts[scored.findIndex((s) => s.endpoint === picked)]++;
  }
  return counts.map((c) => c / n);
};

test("first pick probability is proportional to score", () => {
  const f = frequencies(make(1, 3), scoredOf([3, 1, 0]), 8000);
  assert.ok(Math.abs(f[0]! - 0.75) < 0.03, `f=${f}`);
  assert.ok(Math.abs(f[1]! - 0.25) < 0.03, `f=${f}`);
  assert.equal(f[2], 0);
});

test("all scores zero → uniform", () => {
  const f = frequencies(make(1, 5), scoredOf([0, 0]), 4000);
  assert.ok(Math.abs(f[0]! - 0.5) < 0.04, `f=${f}`);
});

test("maxNumOfEndpoints samples without replacement; same seed same picks", () => {
  const picked = make(2, 9).pick(makeContext(), scoredOf([1, 1, 1])).targetEndpoints;
  assert.equal(new Set(picked).size, 2);
  const run = (p: Picker) =>
    Array.from(
      { length: 8 },
      () => p.pick(makeContext(), scoredOf([0.2, 0.5, 0.3])).targetEndpoints[0]!.metadata.name,
    );
  assert.deepEqual(run(make(1, 11)), run(make(1, 11)));
});
