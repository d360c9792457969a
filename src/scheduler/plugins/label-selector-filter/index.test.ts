import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Filter } from "../../framework/types.ts";
import { definition } from "./index.ts";

const endpoints = [
  makeEndpoint("a", { labels: { zone: "x", gpu: "h200" } }),
  makeEndpoint("b", { labels: { zone: "y", gpu: "h200" } }),
  makeEndpoint("c", { labels: { zone: "z" } }),
];
const kept = (params: unknown) => {
  const filter = definition.create(definition.parameters.parse(params), makeEnv("f")) as Filter;
  return filter.filter(makeContext(), endpoints).map((e) => e.metadata.name);
};

test("matchLabels and each operator follow k8s selector semantics", () => {
  assert.deepEqual(kept({ matchLabels: { gpu: "h200" } }), ["a", "b"]);
  assert.deepEqual(kept({ matchExpressions: [{ key: "zone", operator: "In", values: ["x", "z"] }] }), [
    "a",
    "c",
  ]);
  assert.deepEqual(kept({ matchExpressions: [{ key: "zone", operator: "NotIn", values: ["x"] }] }), [
    "b",
    "c",
  ]);
  assert.deepEqual(kept({ matchExpressions: [{ key: "gpu", operator: "Exists" }] }), ["a", "b"]);
  assert.deepEqual(kept({ matchExpressions: [{ key: "gpu", operator: "DoesNotExist" }] }), ["c"]);
});

test("requirements combine with AND; empty selector keeps all", () => {
  const both = {
    matchLabels: { gpu: "h200" },
    matchExpressions: [{ key: "zone", operator: "NotIn", values: ["x"] }],
  };
  assert.deepEqual(kept(both), ["b"]);
  assert.deepEqual(kept({}), ["a", "b", "c"]);
});

test("In without values is rejected", () => {
  assert.equal(
    definition.parameters.safeParse({ matchExpressions: [{ key: "k", operator: "In" }] }).success,
    false,
  );
});
