import assert from "node:assert/strict";
import { test } from "node:test";
import { LlmdError } from "../../api/errors.ts";
import { definition as maxScorePicker } from "../plugins/max-score-picker/index.ts";
import { definition as singleProfileHandler } from "../plugins/single-profile-handler/index.ts";
import { clampScore, runProfile } from "./profile-runner.ts";
import { Scheduler, type SchedulerParts } from "./scheduler.ts";
import { makeContext, makeEndpoint, makeEnv } from "./testing.ts";
import type { DataProducer, Filter, Picker, ProfileHandler, SchedulerProfile, Scorer } from "./types.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));
const picker = () => maxScorePicker.create({ maxNumOfEndpoints: 1 }, makeEnv("max-score-picker")) as Picker;
const fixedScorer = (name: string, scores: number[]): Scorer => ({
  type: "fixed",
  name,
  category: "distribution",
  score: (_ctx, eps) => eps.map((e) => scores[endpoints.indexOf(e)]!),
});
const dropFilter = (drop: string): Filter => ({
  type: "drop",
  name: `drop-${drop}`,
  filter: (_ctx, eps) => eps.filter((e) => e.metadata.name !== drop),
});
const profileOf = (p: Partial<SchedulerProfile>): SchedulerProfile => ({
  name: "default",
  filters: [],
  scorers: [],
  picker: picker(),
  ...p,
});
const partsOf = (profile: SchedulerProfile, extra: Partial<SchedulerParts> = {}): SchedulerParts => ({
  profileHandler: singleProfileHandler.create({}, makeEnv("h")) as ProfileHandler,
  profiles: new Map([[profile.name, profile]]),
  headerProcessors: [],
  screeners: [],
  producers: [],
  preRequests: [],
  responseHooks: [],
  ...extra,
});

test("scores are clamped to [0,1], weighted and summed", () => {
  assert.deepEqual(
    [clampScore(-1), clampScore(2), clampScore(Number.NaN), clampScore(undefined), clampScore(0.4)],
    [0, 1, 0, 0, 0.4],
  );
  const profile = profileOf({
    scorers: [
      { scorer: fixedScorer("s1", [5, 0.5, 0]), weight: 1 },
      { scorer: fixedScorer("s2", [0, 0.5, 1]), weight: 3 },
    ],
  });
  const result = runProfile(makeContext(), profile, endpoints)!;
  assert.deepEqual(
    result.scored.map((s) => s.score),
    [1, 2, 3],
  );
  assert.equal(result.targetEndpoints[0]!.metadata.name, "c");
});

test("filters run in order; a drained profile yields null and the handler's 429", () => {
  const profile = profileOf({ filters: [dropFilter("a"), dropFilter("b")] });
  assert.deepEqual(
    runProfile(makeContext(), profile, endpoints)!.targetEndpoints.map((e) => e.metadata.name),
    ["c"],
  );
  const drained = profileOf({ filters: [dropFilter("a"), dropFilter("b"), dropFilter("c")] });
  assert.equal(runProfile(makeContext(), drained, endpoints), null);
  const outcome = new Scheduler(partsOf(drained)).schedule(makeContext(), endpoints);
  assert.ok(outcome instanceof LlmdError && outcome.droppedReason === "rejected-saturated");
});

test("header processors run only in processRequestHeaders; prepare runs producers in order, synchronously unless one is async", async () => {
  const order: string[] = [];
  const producer = (name: string, async = false): DataProducer => ({
    type: "p",
    name,
    produce: () => {
      order.push(name);
      return async ? Promise.resolve() : undefined;
    },
  });
  const headers = { type: "h", name: "h", processRequestHeaders: () => void order.push("h") };
  const sync = new Scheduler(
    partsOf(profileOf({}), { headerProcessors: [headers], producers: [producer("p1"), producer("p2")] }),
  );
  const ctx = makeContext();
  sync.processRequestHeaders(ctx);
  assert.deepEqual(order, ["h"]);
  assert.equal(sync.prepare(ctx, endpoints), undefined);
  assert.deepEqual(order, ["h", "p1", "p2"]);
  order.length = 0;
  const mixed = new Scheduler(partsOf(profileOf({}), { producers: [producer("p1", true), producer("p2")] }));
  const pending = mixed.prepare(makeContext(), endpoints);
  assert.ok(pending instanceof Promise);
  assert.deepEqual(order, ["p1"]);
  await pending;
  assert.deepEqual(order, ["p1", "p2"]);
});

test("preRequest, firstToken and complete reach every plugin implementing them", () => {
  const seen: string[] = [];
  const hooks = {
    type: "hooks",
    name: "hooks",
    preRequest: () => void seen.push("pre"),
    onFirstToken: () => void seen.push("first"),
    onResponseComplete: (_c: unknown, _e: unknown, cause: string) => void seen.push(`done:${cause}`),
  };
  const scheduler = new Scheduler(partsOf(profileOf({}), { preRequests: [hooks], responseHooks: [hooks] }));
  const ctx = makeContext();
  const result = scheduler.schedule(ctx, endpoints);
  assert.ok(!(result instanceof LlmdError));
  scheduler.preRequest(ctx, result);
  scheduler.firstToken(ctx, endpoints[0]!);
  scheduler.complete(ctx, endpoints[0]!, "client-disconnect", undefined);
  assert.deepEqual(seen, ["pre", "first", "done:client-disconnect"]);
});

test("multi-round handlers run each profile once; a handler repeating itself cannot loop", () => {
  const runs: string[] = [];
  const tracking = (name: string) =>
    profileOf({
      name,
      filters: [
        {
          type: "t",
          name,
          filter: (_c, e) => {
            runs.push(name);
            return e;
          },
        },
      ],
    });
  const profiles = new Map([
    ["decode", tracking("decode")],
    ["prefill", tracking("prefill")],
  ]);
  const greedy: ProfileHandler = {
    type: "greedy",
    name: "greedy",
    pickProfiles: (_ctx, all, results) => (results.size === 0 ? [all.get("decode")!] : [...all.values()]),
    processResults: (_ctx, results) => ({ primaryProfileName: "decode", profileResults: new Map(results) }),
  };
  const result = new Scheduler({ ...partsOf(profileOf({})), profileHandler: greedy, profiles }).schedule(
    makeContext(),
    endpoints,
  );
  assert.deepEqual(runs, ["decode", "prefill"]);
  assert.ok(!(result instanceof LlmdError) && result.profileResults.size === 2);
});
