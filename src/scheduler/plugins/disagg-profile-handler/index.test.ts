import assert from "node:assert/strict";
import { test } from "node:test";
import { LlmdError } from "../../../api/errors.ts";
import { createSample } from "../../../config/testing.ts";
import { type Endpoint, ROLE_LABEL } from "../../../endpoints/endpoint.ts";
import {
  DISAGG_DECISION_STATE_KEY,
  PEER_ENDPOINT_ATTRIBUTE,
  UPSTREAM_HEADERS_STATE_KEY,
} from "../../framework/data-keys.ts";
import { runProfile } from "../../framework/profile-runner.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type {
  Filter,
  Picker,
  ProfileRunResult,
  SchedulerProfile,
  SchedulingContext,
} from "../../framework/types.ts";
import type { Plugin } from "../../../plugin/types.ts";
import type { Decider } from "../shared/decider.ts";
import { type DisaggProfileHandler, definition, ENCODERS_HEADER, PREFILLER_HEADER } from "./index.ts";

/** A decider that answers `answer` and records the endpoint it was shown. */
function fixedDecider(name: string, answer: boolean) {
  const seen: (Endpoint | undefined)[] = [];
  const decider: Decider & { seen: typeof seen } = {
    type: "fixed-decider",
    name,
    seen,
    disaggregate: (_ctx, endpoint) => {
      seen.push(endpoint);
      return answer;
    },
  };
  return decider;
}

const role = (name: string, r: string, port: number) =>
  makeEndpoint(name, { labels: { [ROLE_LABEL]: r }, port });
const POOL = [role("p0", "prefill", 8001), role("d0", "decode", 8002), role("e0", "encode", 8003)];

const profile = (name: string, filterType: string): SchedulerProfile => ({
  name,
  filters: [createSample(filterType) as Filter],
  scorers: [],
  picker: createSample("max-score-picker") as Picker,
});
const PROFILES = new Map(
  [
    profile("prefill", "prefill-filter"),
    profile("decode", "decode-filter"),
    profile("encode", "encode-filter"),
  ].map((p) => [p.name, p]),
);

function create(params: unknown, plugins: Record<string, Plugin> = {}) {
  return definition.create(
    definition.parameters.parse(params),
    makeEnv("disagg", plugins),
  ) as DisaggProfileHandler;
}

/** Runs the handler's rounds like the scheduler; returns the rounds, the decision and the context. */
function drive(handler: DisaggProfileHandler, endpoints = POOL, profiles = PROFILES, ctx = makeContext()) {
  const results = new Map<string, ProfileRunResult | null>();
  const rounds: string[] = [];
  const peers: (string | undefined)[] = [];
  for (let picked = handler.pickProfiles(ctx, profiles, results); picked.length > 0; ) {
    for (const p of picked) {
      rounds.push(p.name);
      peers.push(
        (ctx.request.attributes.get(PEER_ENDPOINT_ATTRIBUTE) as Endpoint | undefined)?.metadata.name,
      );
      results.set(p.name, runProfile(ctx, p, endpoints));
    }
    picked = handler.pickProfiles(ctx, profiles, results);
  }
  const decision = handler.processResults(ctx, results);
  if (!(decision instanceof LlmdError)) handler.preRequest(ctx, decision);
  return {
    rounds,
    peers,
    decision,
    headers: upstream(ctx),
    decided: ctx.state.get(DISAGG_DECISION_STATE_KEY),
  };
}

const upstream = (ctx: SchedulingContext) =>
  Object.fromEntries((ctx.state.get(UPSTREAM_HEADERS_STATE_KEY) as Map<string, string> | undefined) ?? []);

const CASES = [
  {
    name: "decode-first, decider yes: decode then prefill, header names the prefill pick",
    params: { deciders: { prefill: "pd" } },
    pd: true,
    rounds: ["decode", "prefill"],
    peers: [undefined, "d0"],
    headers: { [PREFILLER_HEADER]: "10.0.0.1:8001" },
  },
  {
    name: "decode-first, decider no: decode only, no header",
    params: { deciders: { prefill: "pd" } },
    pd: false,
    rounds: ["decode"],
    peers: [undefined],
    headers: {},
  },
  {
    name: "no decider configured: decode only",
    params: {},
    pd: true,
    rounds: ["decode"],
    peers: [undefined],
    headers: {},
  },
  {
    name: "prefill-first: prefill then decode, the prefill pick is decode's peer",
    params: { stageOrder: "prefill-first" },
    pd: true,
    rounds: ["prefill", "decode"],
    peers: [undefined, "p0"],
    headers: { [PREFILLER_HEADER]: "10.0.0.1:8001" },
  },
  {
    name: "E/P/D decode-first, both deciders yes: decode, encode, prefill",
    params: { deciders: { prefill: "pd", encode: "enc" } },
    pd: true,
    enc: true,
    rounds: ["decode", "encode", "prefill"],
    peers: [undefined, undefined, "d0"],
    headers: { [PREFILLER_HEADER]: "10.0.0.1:8001", [ENCODERS_HEADER]: "10.0.0.1:8003" },
  },
  {
    name: "E/P/D prefill-first, encode yes",
    params: { stageOrder: "prefill-first", deciders: { encode: "enc" } },
    enc: true,
    rounds: ["prefill", "encode", "decode"],
    peers: [undefined, undefined, "p0"],
    headers: { [PREFILLER_HEADER]: "10.0.0.1:8001", [ENCODERS_HEADER]: "10.0.0.1:8003" },
  },
];

for (const c of CASES) {
  test(`disagg-profile-handler: ${c.name}`, () => {
    const plugins = { pd: fixedDecider("pd", c.pd ?? false), enc: fixedDecider("enc", c.enc ?? false) };
    const run = drive(create(c.params, plugins));
    assert.deepEqual(run.rounds, c.rounds);
    assert.deepEqual(run.peers, c.peers);
    assert.ok(!(run.decision instanceof LlmdError));
    assert.equal(run.decision.primaryProfileName, "decode", "decode is primary");
    assert.equal(run.decision.profileResults.get("decode")?.targetEndpoints[0]?.metadata.name, "d0");
    assert.deepEqual(run.headers, c.headers);
    const stages = [ENCODERS_HEADER in c.headers && "encode", PREFILLER_HEADER in c.headers && "prefill"];
    const ran = stages.filter(Boolean);
    assert.equal(run.decided, ran.length > 0 ? `${ran.join("-")}-decode` : "decode-only");
  });
}

test("decode-first deciders judge the decode pick, once per request", () => {
  const pd = fixedDecider("pd", false);
  const handler = create({ deciders: { prefill: "pd" } }, { pd });
  drive(handler);
  assert.deepEqual(
    pd.seen.map((e) => e?.metadata.name),
    ["d0"],
  );
});

test("no decode endpoint fails the request before any other stage runs", () => {
  const pd = fixedDecider("pd", true);
  const run = drive(create({ deciders: { prefill: "pd" } }, { pd }), [POOL[0]!, POOL[2]!]);
  assert.deepEqual(run.rounds, ["decode"]);
  assert.ok(run.decision instanceof LlmdError && run.decision.status === 429);
  assert.deepEqual(pd.seen, []);
});

test("a prefill stage that ran and found no endpoint fails the request instead of going decode-only", () => {
  const pd = fixedDecider("pd", true);
  const run = drive(create({ deciders: { prefill: "pd" } }, { pd }), [POOL[1]!]);
  assert.deepEqual(run.rounds, ["decode", "prefill"]);
  assert.ok(run.decision instanceof LlmdError);
  assert.deepEqual(run.headers, {});
});

test("an encode stage that found nothing is dropped; the request goes decode-only", () => {
  const run = drive(
    create({ deciders: { encode: "enc" } }, { enc: fixedDecider("enc", true) }),
    POOL.slice(0, 2),
  );
  assert.deepEqual(run.rounds, ["decode", "encode"]);
  assert.ok(!(run.decision instanceof LlmdError));
  assert.deepEqual(run.headers, {});
});

test("custom profile names and a missing optional profile", () => {
  const renamed = new Map([
    ["d", { ...profile("d", "decode-filter") }],
    ["p", { ...profile("p", "prefill-filter") }],
  ]);
  const handler = create(
    { profiles: { decode: "d", prefill: "p" }, deciders: { prefill: "pd", encode: "enc" } },
    { pd: fixedDecider("pd", true), enc: fixedDecider("enc", true) },
  );
  const run = drive(handler, POOL, renamed);
  assert.deepEqual(run.rounds, ["d", "p"], "no encode profile, so no encode stage");
  assert.ok(!(run.decision instanceof LlmdError));
  assert.equal(run.decision.primaryProfileName, "d");
});

test("config errors: unknown or non-decider references, a prefill decider in prefill-first order", () => {
  assert.throws(
    () => create({ deciders: { prefill: "missing" } }),
    /deciders.prefill: no plugin named "missing"/,
  );
  const scorer = createSample("queue-scorer");
  assert.throws(() => create({ deciders: { encode: "q" } }, { q: scorer }), /is not a decider/);
  const bad = definition.parameters.safeParse({ stageOrder: "prefill-first", deciders: { prefill: "pd" } });
  assert.ok(!bad.success);
  assert.deepEqual(bad.error.issues[0]?.path, ["deciders", "prefill"]);
  assert.ok(!definition.parameters.safeParse({ stageOrder: "sideways" }).success);
  assert.ok(
    !definition.parameters.safeParse({ profiles: { fallback: "x" } }).success,
    "fallback unsupported",
  );
});
