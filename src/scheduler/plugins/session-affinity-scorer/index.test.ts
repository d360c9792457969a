import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock } from "../../../core/clock.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { SchedulingResult } from "../../framework/types.ts";
import { RESPONSE_HEADERS_STATE_KEY } from "../../framework/data-keys.ts";
import { instantiate, resultFor } from "../testing.ts";
import { definition, type SessionAffinityScorer } from "./index.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));
const headersOf = (ctx: ReturnType<typeof makeContext>) =>
  Object.fromEntries((ctx.state.get(RESPONSE_HEADERS_STATE_KEY) as Map<string, string> | undefined) ?? []);

test("encoded header: token = base64(namespace/name) of the pick; echoed token scores 1 there", () => {
  const scorer = instantiate<SessionAffinityScorer>(definition);
  const first = makeContext();
  assert.deepEqual(Array.from(scorer.score(first, endpoints)), [0, 0, 0]);
  scorer.preRequest(first, resultFor(endpoints[1]!));
  const token = headersOf(first)["x-session-token"]!;
  assert.equal(Buffer.from(token, "base64").toString(), "default/b");
  const next = makeContext({ headers: { "x-session-token": token } });
  assert.deepEqual(Array.from(scorer.score(next, endpoints)), [0, 1, 0]);
  const gone = makeContext({ headers: { "x-session-token": Buffer.from("default/zz").toString("base64") } });
  assert.deepEqual(Array.from(scorer.score(gone, endpoints)), [0, 0, 0]);
});

test("profileName and a custom header serve the prefill stage in P/D", () => {
  const scorer = instantiate<SessionAffinityScorer>(definition, {
    profileName: "prefill",
    encodedEndpointHeaderConfig: { header: "x-session-token-prefill" },
  });
  const ctx = makeContext();
  const result: SchedulingResult = {
    primaryProfileName: "decode",
    profileResults: new Map([
      ["decode", { targetEndpoints: [endpoints[0]!], scored: [] }],
      ["prefill", { targetEndpoints: [endpoints[2]!], scored: [] }],
    ]),
  };
  scorer.preRequest(ctx, result);
  assert.equal(Buffer.from(headersOf(ctx)["x-session-token-prefill"]!, "base64").toString(), "default/c");
});

test("session_id: first pick binds, sources in order, TTL expiry, rebind when the endpoint is gone", () => {
  const clock = new ManualClock();
  const params = {
    strategy: "session_id",
    sessionIdConfig: {
      sources: [{ header: "x-session-id" }, { attribute: "agent-identity" }],
      evictionTtlSeconds: 300,
    },
  };
  const scorer = instantiate<SessionAffinityScorer>(definition, params, makeEnv("s", {}, clock));
  const turn = (
    pick: number,
    candidates = endpoints,
    headers: Record<string, string> = { "x-session-id": "s1" },
  ) => {
    const ctx = makeContext({ headers }, clock);
    const scores = Array.from(scorer.score(ctx, candidates));
    scorer.preRequest(ctx, resultFor(candidates[pick]!));
    return scores;
  };
  assert.deepEqual(turn(2), [0, 0, 0]);
  assert.deepEqual(turn(0), [0, 0, 1], "bound to c; a load-driven pick elsewhere does not rebind");
  assert.deepEqual(turn(0), [0, 0, 1]);
  assert.deepEqual(turn(1, endpoints.slice(0, 2)), [0, 0], "c gone: rebinds to the pick");
  assert.deepEqual(turn(0), [0, 1, 0]);
  clock.advance(301_000);
  assert.deepEqual(turn(0), [0, 0, 0], "expired after the TTL");
  const viaAttribute = makeContext({}, clock);
  viaAttribute.request.attributes.set("agent-identity", "s1");
  assert.deepEqual(Array.from(scorer.score(viaAttribute, endpoints)), [1, 0, 0]);
  assert.equal(scorer.affinity.size, 1);
});
