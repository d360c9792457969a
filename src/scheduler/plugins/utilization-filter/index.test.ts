import assert from "node:assert/strict";
import { test } from "node:test";
import { attributeKey, IN_FLIGHT_LOAD } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Filter } from "../../framework/types.ts";
import { definition } from "./index.ts";

const make = (params: unknown) =>
  definition.create(definition.parameters.parse(params), makeEnv("u")) as Filter;
const endpoints = [
  makeEndpoint("idle", {
    metrics: { waitingQueueSize: 0, runningRequestsSize: 1, kvCacheUsagePercent: 0.1 },
  }),
  makeEndpoint("queued", {
    metrics: { waitingQueueSize: 9, runningRequestsSize: 4, kvCacheUsagePercent: 0.5 },
  }),
  makeEndpoint("full", {
    metrics: { waitingQueueSize: 1, runningRequestsSize: 8, kvCacheUsagePercent: 0.97 },
  }),
];
const names = (eps: readonly { metadata: { name: string } }[]) => eps.map((e) => e.metadata.name);

test("drops endpoints over any cap", () => {
  const f = make({
    conditions: [
      { metric: "waiting-queue", maxValue: 4 },
      { metric: "kv-cache-utilization", maxValue: 0.9 },
    ],
  });
  assert.deepEqual(names(f.filter(makeContext(), endpoints)), ["idle"]);
  const running = make({ conditions: [{ metric: "running-requests", maxValue: 4 }] });
  assert.deepEqual(names(running.filter(makeContext(), endpoints)), ["idle", "queued"]);
});

test("active-requests reads the inflight-load producer's snapshot", () => {
  const ctx = makeContext();
  ctx.state.set(
    attributeKey(IN_FLIGHT_LOAD),
    new Map([
      ["default/idle", { requests: 5, tokens: 0 }],
      ["default/full", { requests: 1, tokens: 0 }],
    ]),
  );
  const f = make({ conditions: [{ metric: "active-requests", maxValue: 2 }] });
  assert.deepEqual(names(f.filter(ctx, endpoints)), ["queued", "full"]);
});

test("nothing left: empty, or all with fallbackOnEmpty", () => {
  const conditions = [
    { metric: "waiting-queue", maxValue: 0 },
    { metric: "running-requests", maxValue: 0 },
  ];
  assert.deepEqual(make({ conditions }).filter(makeContext(), endpoints), []);
  assert.equal(make({ conditions, fallbackOnEmpty: true }).filter(makeContext(), endpoints).length, 3);
});

test("conditions are required", () => {
  assert.equal(definition.parameters.safeParse({}).success, false);
});
