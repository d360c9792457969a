/**
 * The contract every registered profile handler must honour, run against each built-in one over
 * profiles made of real registered filters, scorers and pickers: pickProfiles names only profiles it
 * was given, never one already run, and ends (returns []) within a round per profile;
 * processResults names a primary profile that ran and picked something, or returns an LlmdError
 * value (never throws) when nothing was picked; the same inputs give the same decision.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LlmdError } from "../../api/errors.ts";
import { builtinDefinitions, createSample } from "../../config/testing.ts";
import { type Endpoint, ROLE_LABEL } from "../../endpoints/endpoint.ts";
import { isFilter, isPicker, isProfileHandler, isScorer } from "../framework/guards.ts";
import { runProfile } from "../framework/profile-runner.ts";
import { makeContext, makeEndpoint } from "../framework/testing.ts";
import type { ProfileHandler, ProfileRunResult, SchedulerProfile } from "../framework/types.ts";
import type { Plugin } from "../../plugin/types.ts";

const handlerTypes = builtinDefinitions()
  .map((d) => d.type)
  .filter((type) => isProfileHandler(createSample(type)));

/** A profile of registered plugins: the filters, a queue scorer, the max-score picker. */
function profile(name: string, ...filterPlugins: Plugin[]): SchedulerProfile {
  const filters = filterPlugins.filter(isFilter);
  const scorer = createSample("queue-scorer");
  const picker = createSample("max-score-picker");
  assert.ok(filters.length === filterPlugins.length && isScorer(scorer) && isPicker(picker));
  return { name, filters, scorers: [{ scorer, weight: 1 }], picker };
}

const filter = (type: string, params?: unknown) => createSample(type, { params });

/** Profile sets a handler may be configured with (llm-d's names for P/D). */
const PROFILE_SETS: Record<string, () => SchedulerProfile[]> = {
  single: () => [profile("default")],
  "prefill/decode": () => [
    profile("prefill", filter("prefill-filter")),
    profile("decode", filter("decode-filter")),
  ],
  "three, one draining every endpoint": () => [
    profile("default"),
    profile("decode", filter("decode-filter")),
    profile("none", filter("label-selector-filter", { matchLabels: { tier: "none" } })),
  ],
};

const roleEndpoint = (name: string, role?: string) =>
  makeEndpoint(name, { labels: role ? { [ROLE_LABEL]: role } : {}, metrics: { waitingQueueSize: 1 } });

/** Endpoint sets: none, mixed roles, and only prefill endpoints (the decode filter drains them). */
const ENDPOINT_SETS: Record<string, Endpoint[]> = {
  empty: [],
  mixed: [roleEndpoint("a"), roleEndpoint("p", "prefill"), roleEndpoint("d", "decode")],
  "prefill only": [roleEndpoint("p1", "prefill"), roleEndpoint("p2", "prefill")],
};

/** Runs the handler's rounds like the scheduler, without its round cap, checking each pick. */
function drive(handler: ProfileHandler, profiles: SchedulerProfile[], endpoints: Endpoint[]) {
  const byName = new Map(profiles.map((p) => [p.name, p]));
  const ctx = makeContext({ promptText: "contract prompt" });
  const results = new Map<string, ProfileRunResult | null>();
  const rounds: string[][] = [];
  for (;;) {
    const picked = handler.pickProfiles(ctx, byName, results);
    if (picked.length === 0) break;
    assert.ok(rounds.length < byName.size, `still picking after ${rounds.length} rounds: ${rounds}`);
    for (const p of picked) {
      assert.equal(byName.get(p.name), p, `picked ${p.name}, a profile it was not given`);
      assert.ok(!results.has(p.name), `picked ${p.name} again`);
      results.set(p.name, runProfile(ctx, p, endpoints));
    }
    rounds.push(picked.map((p) => p.name));
  }
  let decision: ReturnType<ProfileHandler["processResults"]> | undefined;
  assert.doesNotThrow(() => {
    decision = handler.processResults(ctx, results);
  }, "processResults never throws");
  return { rounds, results, decision: decision! };
}

/** Checks one decision; true when it is a scheduling result rather than an error value. */
function checkDecision({ results, decision }: ReturnType<typeof drive>): boolean {
  const picked = [...results.values()].some((r) => r !== null);
  if (decision instanceof LlmdError) {
    assert.ok(decision.status >= 400, `error status ${decision.status}`);
    return false;
  }
  assert.ok(picked, "a decision although no profile picked an endpoint");
  const primary = results.get(decision.primaryProfileName);
  assert.ok(primary, `primary ${decision.primaryProfileName} did not run or picked nothing`);
  assert.deepEqual([...decision.profileResults.keys()].sort(), [...results.keys()].sort());
  for (const [name, result] of decision.profileResults) assert.equal(result, results.get(name));
  return true;
}

const summary = ({ rounds, decision }: ReturnType<typeof drive>) =>
  JSON.stringify({
    rounds,
    decision: decision instanceof LlmdError ? decision.code : decision.primaryProfileName,
  });

describe("profile handler contract", () => {
  for (const type of handlerTypes) {
    test(type, () => {
      let decided = 0;
      for (const [setName, makeProfiles] of Object.entries(PROFILE_SETS)) {
        for (const [endpointsName, endpoints] of Object.entries(ENDPOINT_SETS)) {
          const run = drive(createSample(type) as ProfileHandler, makeProfiles(), endpoints);
          if (checkDecision(run)) decided++;
          if (endpoints.length === 0)
            assert.ok(run.decision instanceof LlmdError, "no endpoint, no decision");
          const again = drive(createSample(type) as ProfileHandler, makeProfiles(), endpoints);
          assert.equal(summary(again), summary(run), `${setName}/${endpointsName}: deterministic`);
        }
      }
      assert.ok(decided > 0, "never reached a decision");
    });

    test(`${type}: nothing run or nothing picked is an error value`, () => {
      const handler = createSample(type) as ProfileHandler;
      const ctx = makeContext();
      assert.ok(handler.processResults(ctx, new Map()) instanceof LlmdError, "no profile ran");
      const drained = new Map([
        ["default", null],
        ["decode", null],
      ]);
      assert.ok(handler.processResults(ctx, drained) instanceof LlmdError, "every profile picked nothing");
    });
  }
});

test("the contract covers every profile handler kind", () => {
  assert.ok(handlerTypes.includes("single-profile-handler"));
  assert.ok(handlerTypes.length >= 2, `${handlerTypes}`);
});
