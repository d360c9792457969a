import assert from "node:assert/strict";
import { test } from "node:test";
import { newRecord, type RequestRecord } from "../measure/records.ts";
import { footprintTimeline, replicaOutcomes, slowestRequests } from "./records-report.ts";

/** A request of `session` on `endpoint`: arrival, start, first token, end in s (NaN: never). */
function request(
  session: string,
  turn: number,
  endpoint: number,
  times: [number, number, number, number],
  inputTokens: number,
  cachedTokens = 0,
): RequestRecord {
  const [arrival, start, first, end] = times.map((t) => t * 1000) as [number, number, number, number];
  return {
    ...newRecord(`weka:${session}:main:${turn}`, "main", arrival, inputTokens),
    startMs: start,
    firstTokenMs: first,
    endMs: end,
    cachedTokens,
    endpoint,
    queuedMs: 0,
  };
}

const sessionOf = (id: string) => id.split(":").slice(0, 2).join(":");
const never = Number.NaN;

// Replica 0: a 400K prefill from 10 s to 100 s, a warm turn queued behind it, one never started.
// Replica 1: an idle-looking replica serving one short turn.
const records = [
  request("big", 0, 0, [10, 10, 100, 110], 400_000),
  request("warm", 3, 0, [20, 100, 101, 105], 50_000, 48_000),
  request("stuck", 1, 0, [30, never, never, never], 60_000),
  request("quick", 0, 1, [40, 40, 41, 42], 10_000),
  request("early", 0, 1, [1, 1, 2, 3], 5_000),
];

test("slowest requests: an unfinished one waits until the cut, and what was prefilling ahead is listed", () => {
  const slow = slowestRequests(records, 5_000, 300_000, 420_000, 3);
  assert.deepEqual(
    slow.map((s) => [s.record.id, s.ttftMs]),
    [
      ["weka:stuck:main:1", 390_000],
      ["weka:big:main:0", 90_000],
      ["weka:warm:main:3", 81_000],
    ],
    "the request before the window (early) is not measured",
  );
  const warm = slow[2]!;
  assert.equal(warm.engineWaitMs, 80_000);
  assert.equal(warm.ownPrefillMs, 1_000);
  assert.deepEqual(
    warm.ahead.map((r) => r.id),
    ["weka:big:main:0"],
  );
  assert.deepEqual(
    slow[0]!.ahead.map((r) => r.id),
    ["weka:big:main:0", "weka:warm:main:3"],
  );
  assert.ok(Number.isNaN(slow[0]!.engineWaitMs), "never started");
});

test("replica outcomes: requests, sessions, unfinished measured requests and tokens prefilled", () => {
  assert.deepEqual(replicaOutcomes(records, 5_000, 300_000, sessionOf), [
    { endpoint: 0, requests: 3, sessions: 3, unfinished: 1, prefilledTokens: 402_000 },
    { endpoint: 1, requests: 2, sessions: 2, unfinished: 0, prefilledTokens: 15_000 },
  ]);
});

test("footprint timeline: a session counts its largest prompt while running and for the idle window after", () => {
  const [at50, at150, at250] = footprintTimeline(records, [50_000, 150_000, 250_000], 90_000, sessionOf);
  assert.deepEqual(at50, [510_000, 15_000], "replica 1: quick (running) and early (ended 47 s ago)");
  assert.deepEqual(
    at150,
    [510_000, 0],
    "replica 1's sessions idle past 90 s (early at 93 s, quick at 132 s)",
  );
  assert.deepEqual(at250, [60_000, 0], "only the never-finished request still counts");
});
