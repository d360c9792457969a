import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Filter } from "../../framework/types.ts";
import { definition } from "./index.ts";

const make = (params: unknown) =>
  definition.create(definition.parameters.parse(params), makeEnv("f")) as Filter;

/** Endpoints a..e with `GPUUtilization` from dcgm-extractor; `e` has none. */
const endpoints = (["a", "b", "c", "d", "e"] as const).map((name, i) => {
  const e = makeEndpoint(name);
  if (name !== "e") e.attributes.set("dcgm-extractor/GPUUtilization", [0.2, 0.95, 0.5, 0.9][i]!);
  e.attributes.set("num_requests_running", i);
  return e;
});
const names = (eps: readonly { metadata: { name: string } }[]) => eps.map((e) => e.metadata.name);
const run = (params: unknown) => names(make(params).filter(makeContext(), endpoints));
const gpu = { attribute: "GPUUtilization", producer: "dcgm-extractor" };

test("threshold: llm-d's shipped GPU config keeps ≤ 0.90 and passes endpoints without the attribute", () => {
  const algorithm = { type: "threshold", threshold: { operator: "LessThanOrEqual", value: 0.9 } };
  assert.deepEqual(run({ ...gpu, onMissing: "Pass", algorithm }), ["a", "c", "d", "e"]);
  assert.deepEqual(run({ ...gpu, onMissing: "Fail", algorithm }), ["a", "c", "d"]);
  const strict = { type: "threshold", threshold: { operator: "LessThan", value: 0.9 } };
  assert.deepEqual(run({ ...gpu, onMissing: "Fail", algorithm: strict }), ["a", "c"]);
  const equal = { type: "threshold", threshold: { operator: "NotEqual", value: 0.5 } };
  assert.deepEqual(run({ ...gpu, onMissing: "Fail", algorithm: equal }), ["a", "b", "d"]);
});

test("without a producer the attribute is a core-metrics-extractor custom metric", () => {
  const algorithm = { type: "threshold", threshold: { operator: "GreaterThanOrEqual", value: 3 } };
  assert.deepEqual(run({ attribute: "num_requests_running", algorithm }), ["d", "e"]);
});

test("range, topK and percentile", () => {
  const fail = { ...gpu, onMissing: "Fail" };
  assert.deepEqual(run({ ...fail, algorithm: { type: "range", range: { min: 0.5, max: 0.9 } } }), ["c", "d"]);
  assert.deepEqual(run({ ...fail, algorithm: { type: "topK", topK: { k: 2 } } }), ["b", "d"]);
  assert.deepEqual(run({ ...fail, algorithm: { type: "topK", topK: { k: 2, higherIsBetter: false } } }), [
    "a",
    "c",
  ]);
  assert.equal(run({ ...fail, algorithm: { type: "topK", topK: { k: 9 } } }).length, 4);
  // Sorted 0.2 0.5 0.9 0.95; the 25th percentile is rank ceil(1) = 0.2, the 50th rank 2 = 0.5.
  const p = (percentile: number, higherIsBetter: boolean) => ({
    ...fail,
    algorithm: { type: "percentile", percentile: { percentile, higherIsBetter } },
  });
  assert.deepEqual(run(p(25, false)), ["a"]);
  assert.deepEqual(run(p(50, true)), ["b", "c", "d"]);
  assert.deepEqual(run(p(0, true)), ["a", "b", "c", "d"]);
});

test("nothing left: empty, or every candidate with fallbackOnEmpty", () => {
  const algorithm = { type: "threshold", threshold: { operator: "LessThan", value: 0 } };
  assert.deepEqual(run({ ...gpu, onMissing: "Fail", algorithm }), []);
  assert.equal(run({ ...gpu, onMissing: "Fail", fallbackOnEmpty: true, algorithm }).length, 5);
});

test("parameters: llm-d's names, enums and rules", () => {
  const bad = (params: unknown) => definition.parameters.safeParse(params).success;
  const algorithm = { type: "threshold", threshold: { operator: "LessThan", value: 1 } };
  assert.ok(bad({ attribute: "x", algorithm }));
  assert.ok(!bad({ attribute: "x" }), "algorithm is required");
  assert.ok(!bad({ attribute: "a/b", algorithm }), "a / needs an explicit producer");
  assert.ok(bad({ attribute: "a/b", producer: "", algorithm }));
  assert.ok(
    !bad({ attribute: "x", algorithm: { type: "threshold", threshold: { operator: "Below", value: 1 } } }),
  );
  assert.ok(!bad({ attribute: "x", onMissing: "Skip", algorithm }));
  assert.ok(!bad({ attribute: "x", algorithm: { type: "range", range: { min: 2, max: 1 } } }));
  assert.ok(!bad({ attribute: "x", algorithm: { type: "topK", topK: { k: 0 } } }));
  assert.ok(!bad({ attribute: "x", algorithm: { type: "percentile", percentile: { percentile: 101 } } }));
});
