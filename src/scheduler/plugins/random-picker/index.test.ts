import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv, seededRandom } from "../../framework/testing.ts";
import type { Picker, ScoredEndpoint } from "../../framework/types.ts";
import { definition } from "./index.ts";

const make = (maxNumOfEndpoints: number, seed: number) => {
  const env = { ...makeEnv("random-picker"), random: seededRandom(seed) };
  return definition.create(definition.parameters.parse({ maxNumOfEndpoints }), env) as Picker;
};
const scored: ScoredEndpoint[] = [1, 0, 0, 0].map((score, i) => ({ endpoint: makeEndpoint(`e${i}`), score }));

test("ignores scores: picks are close to uniform", () => {
  const p = make(1, 7);
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 4000; i++)
    counts[Number(p.pick(makeContext(), scored).targetEndpoints[0]!.metadata.name.slice(1))]!++;
  for (const c of counts) assert.ok(c > 850 && c < 1150, `counts ${counts}`);
});

test("maxNumOfEndpoints gives distinct endpoints", () => {
  const picked = make(3, 1).pick(makeContext(), scored).targetEndpoints;
  assert.equal(new Set(picked).size, 3);
});

test("same seed, same picks", () => {
  const run = (p: Picker) =>
    Array.from({ length: 8 }, () => p.pick(makeContext(), scored).targetEndpoints[0]);
  assert.deepEqual(run(make(1, 42)), run(make(1, 42)));
});
