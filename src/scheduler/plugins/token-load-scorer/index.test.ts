import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { instantiate } from "../testing.ts";
import { definition } from "./index.ts";

const endpoints = ["a", "b", "c"].map((n) => makeEndpoint(n));

test("1 − min(1, (in-flight + own uncached tokens)/threshold); default threshold 4194304", () => {
  assert.equal(definition.parameters.parse({}).queueThresholdTokens, 4194304);
  const scorer = instantiate<Scorer>(definition, { queueThresholdTokens: 1000 });
  const ctx = makeContext();
  ctx.state.set(
    inFlightStateKey("inflight-load-producer"),
    new Map([
      ["default/a", { requests: 0, tokens: 0, requestUncachedTokens: 0 }],
      ["default/b", { requests: 2, tokens: 100, requestUncachedTokens: 10 }],
      ["default/c", { requests: 4, tokens: 900, requestUncachedTokens: 200 }],
    ]),
  );
  const [a, b, c] = Array.from(scorer.score(ctx, endpoints));
  assert.equal(a, 1);
  assert.ok(Math.abs(b! - 0.89) < 1e-12);
  assert.equal(c, 0);
  assert.deepEqual(Array.from(scorer.score(makeContext(), endpoints)), [1, 1, 1], "no load data = idle");
});
