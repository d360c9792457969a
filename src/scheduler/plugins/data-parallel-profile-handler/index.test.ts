import assert from "node:assert/strict";
import { test } from "node:test";
import { LlmdError } from "../../../api/errors.ts";
import { UPSTREAM_HEADERS_STATE_KEY } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type {
  PreRequest,
  ProfileHandler,
  ProfileRunResult,
  SchedulerProfile,
  SchedulingResult,
} from "../../framework/types.ts";
import { DATA_PARALLEL_HEADER, definition, hostPort } from "./index.ts";

type Handler = ProfileHandler & PreRequest & { primaryPort: number };

const create = (params: unknown = {}) =>
  definition.create(definition.parameters.parse(params), makeEnv("dp")) as Handler;

const profile = { name: "default" } as SchedulerProfile;
const other = { name: "other" } as SchedulerProfile;
const ranks = [0, 1, 2].map((dpRank) =>
  makeEndpoint(`vllm-0-rank-${dpRank}`, { port: 8000 + dpRank, dpRank }),
);

function resultFor(target: (typeof ranks)[number] | undefined): SchedulingResult {
  const run: ProfileRunResult = { targetEndpoints: target ? [target] : [], scored: [] };
  return { primaryProfileName: "default", profileResults: new Map([["default", run]]) };
}

test("runs the first profile once, like the single handler", () => {
  const handler = create();
  const ctx = makeContext();
  const profiles = new Map([
    ["default", profile],
    ["other", other],
  ]);
  assert.deepEqual(handler.pickProfiles(ctx, profiles, new Map()), [profile]);
  assert.deepEqual(handler.pickProfiles(ctx, profiles, new Map([["default", null]])), []);
});

test("the profile's result is primary; nothing picked is 429 rejected-saturated", () => {
  const handler = create();
  const ok = handler.processResults(makeContext(), resultFor(ranks[1]).profileResults);
  assert.ok(!(ok instanceof LlmdError));
  assert.equal(ok.primaryProfileName, "default");
  const none = handler.processResults(makeContext(), new Map([["default", null]]));
  assert.ok(none instanceof LlmdError);
  assert.equal(none.status, 429);
  assert.equal(none.droppedReason, "rejected-saturated");
});

test("preRequest sets x-data-parallel-host-port to the picked rank's address:port", () => {
  const handler = create();
  for (const rank of ranks) {
    const ctx = makeContext();
    handler.preRequest(ctx, resultFor(rank));
    const headers = ctx.state.get(UPSTREAM_HEADERS_STATE_KEY) as Map<string, string>;
    assert.equal(headers.get(DATA_PARALLEL_HEADER), `10.0.0.1:${8000 + rank.metadata.dpRank!}`);
  }
});

test("preRequest keeps other plugins' upstream headers and sets nothing without a target", () => {
  const handler = create();
  const ctx = makeContext();
  ctx.state.set(UPSTREAM_HEADERS_STATE_KEY, new Map([["x-other", "1"]]));
  handler.preRequest(ctx, resultFor(ranks[2]));
  assert.deepEqual(
    [...(ctx.state.get(UPSTREAM_HEADERS_STATE_KEY) as Map<string, string>)],
    [
      ["x-other", "1"],
      [DATA_PARALLEL_HEADER, "10.0.0.1:8002"],
    ],
  );
  const empty = makeContext();
  handler.preRequest(empty, resultFor(undefined));
  assert.equal(empty.state.has(UPSTREAM_HEADERS_STATE_KEY), false);
});

test("IPv6 addresses are bracketed", () => {
  const e = makeEndpoint("v6", { port: 8001 });
  const v6 = { ...e, metadata: { ...e.metadata, address: "fd00::5" } };
  assert.equal(hostPort(v6), "[fd00::5]:8001");
});

test("primaryPort defaults to 8000 and is validated strictly", () => {
  assert.equal(create().primaryPort, 8000);
  assert.equal(create({ primaryPort: 9000 }).primaryPort, 9000);
  for (const bad of [{ primaryPort: 0 }, { primaryPort: 70000 }, { primaryPort: "8000" }, { port: 1 }])
    assert.equal(definition.parameters.safeParse(bad).success, false, JSON.stringify(bad));
  assert.equal(definition.stability, "deprecated");
});
