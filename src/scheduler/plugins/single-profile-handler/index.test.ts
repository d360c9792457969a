import assert from "node:assert/strict";
import { test } from "node:test";
import { LlmdError } from "../../../api/errors.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { ProfileHandler, ProfileRunResult, SchedulerProfile } from "../../framework/types.ts";
import { definition } from "./index.ts";

const handler = definition.create({}, makeEnv("single-profile-handler")) as ProfileHandler;
const profile = { name: "default" } as SchedulerProfile;
const profiles = new Map([["default", profile]]);

test("runs the only profile once", () => {
  const ctx = makeContext();
  assert.deepEqual(handler.pickProfiles(ctx, profiles, new Map()), [profile]);
  assert.deepEqual(handler.pickProfiles(ctx, profiles, new Map([["default", null]])), []);
});

test("its result is primary", () => {
  const e = makeEndpoint("a");
  const run: ProfileRunResult = { targetEndpoints: [e], scored: [{ endpoint: e, score: 1 }] };
  const result = handler.processResults(makeContext(), new Map([["default", run]]));
  assert.ok(!(result instanceof LlmdError));
  assert.equal(result.primaryProfileName, "default");
  assert.equal(result.profileResults.get("default"), run);
});

test("nothing picked is 429 rejected-saturated", () => {
  const result = handler.processResults(makeContext(), new Map([["default", null]]));
  assert.ok(result instanceof LlmdError);
  assert.equal(result.status, 429);
  assert.equal(result.droppedReason, "rejected-saturated");
});
