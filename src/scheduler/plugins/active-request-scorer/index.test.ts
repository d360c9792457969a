import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { instantiate } from "../testing.ts";
import { definition } from "./index.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));

function withRequests(...counts: number[]) {
  const ctx = makeContext();
  const snapshot = new Map(
    counts.map((requests, i) => [
      endpoints[i]!.metadata.key,
      { requests, tokens: 0, requestUncachedTokens: 0 },
    ]),
  );
  ctx.state.set(inFlightStateKey("inflight-load-producer"), snapshot);
  return ctx;
}

test("idle → 1; busy scaled by (max − count)/max into [0, maxBusyScore]", () => {
  assert.deepEqual(
    Array.from(instantiate<Scorer>(definition).score(withRequests(0, 2, 4), endpoints)),
    [1, 0.5, 0],
  );
  const tuned = instantiate<Scorer>(definition, { idleThreshold: 2, maxBusyScore: 0.5 });
  assert.deepEqual(Array.from(tuned.score(withRequests(0, 2, 4), endpoints)), [1, 1, 0]);
  assert.deepEqual(Array.from(tuned.score(withRequests(3, 6, 6), endpoints)), [0.25, 0, 0]);
  assert.deepEqual(definition.parameters.parse({ requestTimeout: "2m" }).idleThreshold, 0);
});
