import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import { isDecider } from "../shared/decider.ts";
import { definition } from "./index.ts";

test("always-disagg-pd-decider approves every request, with or without a decode pick", () => {
  const decider = definition.create({}, makeEnv("always"));
  assert.ok(isDecider(decider));
  for (const ctx of [makeContext(), makeContext({ promptText: "long ".repeat(1000) })]) {
    assert.equal(decider.disaggregate(ctx, makeEndpoint("d")), true);
    assert.equal(decider.disaggregate(ctx, undefined), true);
  }
  assert.equal(definition.parameters.safeParse({ nonCachedTokens: 1 }).success, false, "no parameters");
});
