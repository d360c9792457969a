import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext, makeEndpoint, makeEnv } from "../../framework/testing.ts";
import type { Scorer } from "../../framework/types.ts";
import { definition } from "./index.ts";

test("active 1.0, free slot 0.8, waiting 0.6, full 0", () => {
  const scorer = definition.create({}, makeEnv("lora-affinity-scorer")) as Scorer;
  const eps = [
    makeEndpoint("active", { metrics: { activeModels: ["sql"], maxActiveModels: 1 } }),
    makeEndpoint("slot", { metrics: { activeModels: ["chat"], maxActiveModels: 2 } }),
    makeEndpoint("waiting", {
      metrics: { activeModels: ["chat"], waitingModels: ["sql"], maxActiveModels: 2 },
    }),
    makeEndpoint("full", { metrics: { activeModels: ["chat", "x"], maxActiveModels: 2 } }),
  ];
  assert.deepEqual(Array.from(scorer.score(makeContext({ model: "sql" }), eps)), [1, 0.8, 0.6, 0]);
});
