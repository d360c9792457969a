import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runUntilIdle } from "./drive.ts";
import { createEngine } from "./index.ts";
import { syntheticTokens } from "./test-prompts.ts";

/** Order in which requests produced their first token. */
function firstTokenOrder(engine: ReturnType<typeof createEngine>): string[] {
  const order: string[] = [];
  runUntilIdle(engine, 0, (step) => {
    for (const o of step.outputs) if (o.first) order.push(o.id);
  });
  return order;
}

describe("priority scheduling policy", () => {
  const requests = [
    { id: "low-1", priority: 5 },
    { id: "high-1", priority: -1 },
    { id: "mid", priority: 0 },
    { id: "high-2", priority: -1 },
    { id: "low-2", priority: 5 },
  ];

  function queueAll(policy: "fcfs" | "priority") {
    // One seat: requests run one at a time, so first-token order is admission order.
    const engine = createEngine({ maxNumSeqs: 1, schedulingPolicy: policy });
    for (const [i, r] of requests.entries())
      engine.add({ id: r.id, promptTokens: syntheticTokens(64, i), maxTokens: 2, priority: r.priority }, 0);
    return engine;
  }

  it("admits waiting requests by (priority, arrival), lower value first", () => {
    assert.deepEqual(firstTokenOrder(queueAll("priority")), ["high-1", "high-2", "mid", "low-1", "low-2"]);
  });

  it("ignores priorities under the default fcfs policy", () => {
    assert.deepEqual(
      firstTokenOrder(queueAll("fcfs")),
      requests.map((r) => r.id),
    );
  });

  it("preempts the lowest-priority, latest-arrived running request when blocks run out", () => {
    const engine = createEngine({ kvCacheSize: 64, blockSize: 16, schedulingPolicy: "priority" });
    // "low" runs first, so it heads the running list: FCFS would preempt the newest ("c") instead.
    const priorities: Record<string, number> = { low: 3, a: 0, b: 3, c: 0 };
    const add = (id: string, i: number) =>
      engine.add({ id, promptTokens: syntheticTokens(200, i), maxTokens: 300, priority: priorities[id] }, 0);
    add("low", 0);
    const first = engine.step(0)!;
    for (const [i, id] of ["a", "b", "c"].entries()) add(id, i + 1);
    const preempted: string[] = [];
    const { times } = runUntilIdle(engine, first.durationMs, (step) => preempted.push(...step.preempted));
    assert.ok(preempted.length > 0);
    assert.equal(preempted[0], "b", "priority 3 is the least important; b arrived after low");
    for (const id of Object.keys(priorities)) assert.equal(times.get(id)!.generated, 300);
    assert.equal(engine.stats().usedBlocks, 0);
  });

  it("rejects an unknown policy", () => {
    assert.throws(
      () => createEngine({ schedulingPolicy: "lifo" as "fcfs" }),
      (e: Error & { code?: string }) => e.code === "invalid_engine_options",
    );
  });
});
