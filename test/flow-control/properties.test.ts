/**
 * Property tests over seeded random operation sequences: nothing is lost (every enqueued item ends
 * exactly once), strict priority is never inverted while a higher band can dispatch, and dispatch
 * is work-conserving (whenever some band may dispatch, something is dispatched).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { item, seededRandom, testController } from "../../src/flow-control/test-helpers.ts";
import type { FlowExit } from "../../src/flow-control/types.ts";

const CONFIGS = {
  "fcfs + strict": { maxRequests: 40, defaultRequestTTL: "3s", enableEviction: true },
  "round-robin + edf": {
    maxBytes: "20k",
    defaultPriorityBand: {
      fairnessPolicyRef: "round-robin-fairness-policy",
      orderingPolicyRef: "edf-ordering-policy",
    },
    priorityBands: [{ priority: -1, maxRequests: 5 }],
    enableEviction: true,
  },
  "program-aware + soft ceiling": {
    defaultPriorityBand: { fairnessPolicyRef: "program-aware-fairness" },
    usageLimitPolicyPluginRef: "soft-reflective-ceiling-policy",
    noEndpointRequestTTL: "1s",
  },
  "holdback-free slo ordering": {
    defaultPriorityBand: { orderingPolicyRef: "slo-deadline-ordering-policy", maxRequests: 15 },
    defaultRequestTTL: "0s",
  },
};

function runSequence(configName: keyof typeof CONFIGS, seed: number) {
  const random = seededRandom(seed);
  const { controller } = testController(CONFIGS[configName]);
  const endings = new Map<string, string[]>();
  const inFlight: string[] = [];
  const enqueued: string[] = [];
  const record = (exit: FlowExit | undefined) => {
    if (!exit) return;
    const list = endings.get(exit.item.id) ?? [];
    list.push(exit.outcome === "dispatched" ? "dispatched" : `final:${exit.outcome}`);
    endings.set(exit.item.id, list);
  };
  let now = 0;
  for (let step = 0; step < 600; step++) {
    now += Math.floor(random() * 60);
    const op = random();
    if (op < 0.4) {
      const id = `r${step}`;
      const result = controller.enqueue(
        item(id, now, {
          priority: [-2, -1, 0, 0, 5][Math.floor(random() * 5)]!,
          fairnessId: `t${Math.floor(random() * 4)}`,
          bytes: 1 + Math.floor(random() * 2000),
          sloTtftMs: random() < 0.5 ? Math.floor(random() * 1000) : undefined,
          inputTokens: Math.floor(random() * 500),
        }),
      );
      enqueued.push(id);
      if (result.outcome !== "queued") record({ item: item(id, now), outcome: result.outcome, queuedMs: 0 });
    } else if (op < 0.7) {
      const saturation = random() * 1.4;
      checkDispatchInvariants(controller, now, saturation, record, inFlight);
    } else if (op < 0.8 && inFlight.length > 0) {
      const id = inFlight.splice(Math.floor(random() * inFlight.length), 1)[0]!;
      controller.onCompleted(id, { promptTokens: 10, completionTokens: 20, cachedTokens: 0 }, now);
    } else if (op < 0.85) {
      record(controller.cancel(enqueued[Math.floor(random() * enqueued.length)] ?? "none", now));
    } else if (op < 0.9) {
      controller.setHasEndpoints(random() < 0.7);
    } else if (op < 0.97) {
      const exit = controller.evictOne(now, 1.5);
      record(exit);
      if (exit) inFlight.splice(inFlight.indexOf(exit.item.id), 1);
    } else {
      for (const exit of controller.tick(now)) record(exit);
    }
  }
  for (const exit of controller.shutdown(now)) record(exit);
  return { enqueued, endings, stats: controller.stats() };
}

function checkDispatchInvariants(
  controller: ReturnType<typeof testController>["controller"],
  now: number,
  saturation: number,
  record: (exit: FlowExit | undefined) => void,
  inFlight: string[],
) {
  const before = controller.stats();
  const canDispatch = controller.dispatchable(saturation);
  const exit = controller.nextDispatch(now, saturation);
  assert.equal(exit !== undefined, canDispatch, "work-conserving: dispatches iff some band is open");
  if (!exit) return;
  record(exit);
  inFlight.push(exit.item.id);
  // Every configured usage-limit policy gives higher bands ceilings at least as high as lower ones,
  // so whenever a lower band is open a higher queued band is open too: it must have gone first.
  const higherQueued = before.bands.some((band) => band.priority > exit.item.priority && band.requests > 0);
  assert.equal(higherQueued, false, `band ${exit.item.priority} dispatched while a higher band could`);
}

describe("flow-control properties (seeded random operations)", () => {
  for (const configName of Object.keys(CONFIGS) as (keyof typeof CONFIGS)[]) {
    for (const seed of [1, 2, 3, 42, 1337]) {
      it(`${configName}, seed ${seed}: every item ends exactly once`, () => {
        const { enqueued, endings, stats } = runSequence(configName, seed);
        assert.ok(enqueued.length > 150);
        for (const id of enqueued) {
          const ends = endings.get(id) ?? [];
          const finals = ends.filter((end) => end.startsWith("final:"));
          const dispatched = ends.filter((end) => end === "dispatched").length;
          const evicted = finals.includes("final:evicted");
          // Exactly one of: dispatched (maybe later evicted), or rejected; eviction only after dispatch.
          assert.ok(dispatched <= 1, `${id} dispatched twice`);
          assert.equal(dispatched + finals.length - (evicted ? 1 : 0), 1, `${id} ended as ${ends.join(",")}`);
          if (evicted) assert.equal(dispatched, 1, `${id} evicted without dispatch`);
        }
        assert.equal(stats.requests, 0);
      });
    }
  }

  it("strict priority: with the static ceiling, a lower band never dispatches while a higher band waits", () => {
    for (const seed of [5, 6, 7]) {
      const random = seededRandom(seed);
      const { controller } = testController({
        defaultPriorityBand: { fairnessPolicyRef: "round-robin-fairness-policy" },
      });
      let now = 0;
      for (let step = 0; step < 500; step++) {
        now += 1;
        if (random() < 0.6) {
          controller.enqueue(
            item(`r${step}`, now, { priority: Math.floor(random() * 5) - 2, fairnessId: `t${step % 3}` }),
          );
          continue;
        }
        const saturation = random() * 1.2;
        const waiting = controller.stats().bands.filter((band) => band.requests > 0);
        const exit = controller.nextDispatch(now, saturation);
        if (saturation >= 1 || waiting.length === 0) {
          assert.equal(exit, undefined);
          continue;
        }
        assert.equal(exit?.item.priority, waiting[0]!.priority, "the highest waiting band dispatches");
      }
    }
  });
});
