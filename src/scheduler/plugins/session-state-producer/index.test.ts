import assert from "node:assert/strict";
import { test } from "node:test";
import { ManualClock } from "../../../core/clock.ts";
import { attributeKey, SESSION_STATE, type SessionState } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { DataProducer, PreRequest, ResponseHooks, SessionTurns } from "../../framework/types.ts";
import { definition } from "./index.ts";

type Producer = DataProducer & PreRequest & ResponseHooks & SessionTurns & { size: number };
const endpoint = makeEndpoint("a");
const RESULT = {
  primaryProfileName: "p",
  profileResults: new Map([["p", { targetEndpoints: [endpoint], scored: [] }]]),
};

function setup(params = {}) {
  const clock = new ManualClock(1000);
  const producer = definition.create(definition.parameters.parse(params), {
    ...makeEnv("s"),
    clock,
  }) as Producer;
  let n = 0;
  const turn = (session: string, usage = { promptTokens: 100, completionTokens: 10, cachedTokens: 0 }) => {
    const ctx = makeContext({ requestId: `r${n++}`, headers: { "x-session-id": session } }, clock);
    producer.produce(ctx, [endpoint]);
    const before = ctx.state.get(attributeKey(SESSION_STATE, "s")) as SessionState | undefined;
    producer.preRequest(ctx, RESULT);
    return { before, done: () => producer.onResponseComplete?.(ctx, endpoint, "natural", usage), ctx };
  };
  return { clock, producer, turn };
}

test("each request sees its session's state before it; turns count at PreRequest", () => {
  const { clock, producer, turn } = setup();
  const first = turn("s1");
  assert.equal(first.before?.turnsTaken, 0);
  assert.equal(producer.turnsTaken("s1"), 1);
  clock.advance(500);
  const second = turn("s1");
  assert.deepEqual(second.before, {
    turnsTaken: 1,
    durationMs: 500,
    lastSeenAt: 1000,
    inFlightRequests: 1,
    completedRequests: 0,
    totalInputTokens: 0,
    totalOutputTokens: 0,
  });
  first.done();
  second.done();
  const third = turn("s1");
  assert.equal(third.before?.completedRequests, 2);
  assert.equal(third.before?.inFlightRequests, 0);
  assert.equal(third.before?.totalInputTokens, 200);
  assert.equal(third.before?.totalOutputTokens, 20);
  assert.equal(producer.turnsTaken("other"), 0);
});

test("a repeated PreRequest or completion is counted once", () => {
  const { producer, turn } = setup();
  const t = turn("s1");
  producer.preRequest(t.ctx, RESULT);
  assert.equal(producer.turnsTaken("s1"), 1);
  t.done();
  t.done();
  assert.equal(turn("s1").before?.completedRequests, 1);
});

test("sessions idle past the TTL are forgotten, those in flight are kept", () => {
  const { clock, producer, turn } = setup({ idleTtl: "10s" });
  turn("idle").done();
  turn("busy");
  clock.advance(20_000);
  turn("new");
  assert.equal(producer.turnsTaken("idle"), 0);
  assert.equal(producer.turnsTaken("busy"), 1);
  assert.equal(producer.size, 2);
});
