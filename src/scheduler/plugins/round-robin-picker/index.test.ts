import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Picker } from "../../framework/types.ts";
import { definition } from "./index.ts";

describe("round-robin-picker", () => {
  const endpoints = ["c", "a", "b"].map((n) => ({ endpoint: makeEndpoint(n), score: n === "a" ? 1 : 0 }));

  it("cycles in key order whatever the scores", () => {
    const picker = definition.create(definition.parameters.parse({}), makeEnv("rr")) as Picker;
    const names = [0, 1, 2, 3].map(
      () => picker.pick(makeContext(), endpoints).targetEndpoints[0]!.metadata.name,
    );
    assert.deepEqual(names, ["a", "b", "c", "a"]);
  });

  it("keeps one cycle per profile when profiles share it", () => {
    const picker = definition.create(definition.parameters.parse({}), makeEnv("rr")) as Picker;
    const names = [0, 1, 2].map(() => {
      picker.pick(makeContext(), endpoints, "decode");
      return picker.pick(makeContext(), endpoints, "prefill").targetEndpoints[0]!.metadata.name;
    });
    assert.deepEqual(names, ["a", "b", "c"]);
  });
});
