import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { concurrencyDetector } from "../policies/concurrency-detector.ts";
import { endpoint, item, seededRandom, testController } from "../test-helpers.ts";
import type { SaturationDetector } from "../types.ts";
import { VirtualFlowHost, type VirtualFlowStep } from "./virtual.ts";

const ids = (step: VirtualFlowStep, list: "dispatched" | "dropped" | "evicted") =>
  step[list].map((exit) => exit.item.id);

function manualHost(config = {}, hostOptions: { pollIntervalMs?: number; maxUnplaced?: number } = {}) {
  const level = { value: 0 };
  const detector: SaturationDetector = {
    type: "manual-detector",
    name: "manual",
    kind: "saturation-detector",
    saturation: () => level.value,
    endpointSaturated: () => level.value >= 1,
  };
  const endpoints = [endpoint("ep-a")];
  const runtime = testController({ ...config, saturationDetector: { pluginRef: "manual" } }, [detector]);
  const host = new VirtualFlowHost({ runtime, endpoints: () => endpoints, ...hostOptions });
  return { host, level, endpoints, runtime };
}

describe("VirtualFlowHost", () => {
  it("dispatches an arrival at once when the pool is idle, with no wake-up needed", () => {
    const { host } = manualHost({ defaultRequestTTL: "0s" });
    const step = host.enqueue(item("a", 100), 100);
    assert.deepEqual(ids(step, "dispatched"), ["a"]);
    assert.equal(step.blocked, false);
    assert.equal(step.wakeAt, undefined);
  });

  it("holds arrivals while saturated and wakes at the TTL deadline or the poll, whichever is first", () => {
    const { host, level } = manualHost({ defaultRequestTTL: "1s" }, { pollIntervalMs: 50 });
    level.value = 1;
    const step = host.enqueue(item("a", 100), 100);
    assert.deepEqual(ids(step, "dispatched"), []);
    assert.equal(step.blocked, true);
    assert.equal(step.wakeAt, 150);
    const withoutPoll = manualHost({ defaultRequestTTL: "1s" });
    withoutPoll.level.value = 1;
    assert.equal(withoutPoll.host.enqueue(item("a", 100), 100).wakeAt, 1100);
  });

  it("expires at the deadline with rejected-ttl-expired", () => {
    const { host, level } = manualHost({ defaultRequestTTL: "1s" });
    level.value = 1;
    host.enqueue(item("a", 0), 0);
    assert.deepEqual(ids(host.wake(999), "dropped"), []);
    const step = host.wake(1000);
    assert.deepEqual(ids(step, "dropped"), ["a"]);
    assert.equal(step.dropped[0]!.outcome, "rejected-ttl-expired");
    assert.equal(step.wakeAt, undefined);
    assert.equal(host.queued, 0);
  });

  it("dispatches queued items one placement at a time (no overshoot on a stale reading)", () => {
    const { host, level } = manualHost();
    level.value = 1;
    for (const id of ["a", "b", "c"]) host.enqueue(item(id, 0), 0);
    level.value = 0;
    assert.deepEqual(ids(host.saturationChanged(10), "dispatched"), ["a"]);
    assert.deepEqual(ids(host.wake(10), "dispatched"), [], "waits for the placement");
    assert.deepEqual(ids(host.placed("a", 11), "dispatched"), ["b"]);
    assert.deepEqual(ids(host.completed("b", undefined, 12), "dispatched"), ["c"]);
    const batched = manualHost({}, { maxUnplaced: 2 });
    batched.level.value = 1;
    for (const id of ["a", "b", "c"]) batched.host.enqueue(item(id, 0), 0);
    batched.level.value = 0;
    assert.deepEqual(ids(batched.host.wake(1), "dispatched"), ["a", "b"]);
  });

  it("counts placements in a concurrency detector and releases them on completion", () => {
    const detector = concurrencyDetector(
      { concurrencyMode: "requests", maxConcurrency: 1, maxTokenConcurrency: 1e6, headroom: 0 },
      "cd",
    );
    const runtime = testController({ saturationDetector: { pluginRef: "cd" } }, [detector]);
    const endpoints = [endpoint("ep-a")];
    const host = new VirtualFlowHost({ runtime, endpoints: () => endpoints });
    assert.deepEqual(ids(host.enqueue(item("a", 0), 0), "dispatched"), ["a"]);
    assert.deepEqual(ids(host.placed("a", 1, "ep-a"), "dispatched"), []);
    assert.equal(detector.loadOf("ep-a").requests, 1);
    assert.deepEqual(ids(host.enqueue(item("b", 2), 2), "dispatched"), []);
    const step = host.completed("a", { promptTokens: 10, completionTokens: 5, cachedTokens: 0 }, 3);
    assert.deepEqual(ids(step, "dispatched"), ["b"]);
    assert.equal(detector.loadOf("ep-a").requests, 0);
  });

  it("evicts a sheddable in-flight item for a blocked higher band", () => {
    const { host, level } = manualHost({ enableEviction: true });
    host.enqueue(item("batch", 0, { priority: -1 }), 0);
    host.placed("batch", 0);
    level.value = 1;
    const step = host.enqueue(item("chat", 5, { priority: 4 }), 5);
    assert.deepEqual(ids(step, "evicted"), ["batch"]);
    assert.equal(step.evicted[0]!.outcome, "evicted");
  });

  it("answers empty-pool waits with rejected-no-endpoints and cancels and shuts down", () => {
    const { host, endpoints } = manualHost({ defaultRequestTTL: "10s", noEndpointRequestTTL: "2s" });
    endpoints.length = 0;
    host.enqueue(item("a", 0), 0);
    host.enqueue(item("b", 0), 0);
    host.enqueue(item("c", 0), 0);
    const cancelled = host.cancel("b", 1);
    assert.equal(cancelled.dropped[0]!.outcome, "rejected-context-cancelled");
    assert.equal(cancelled.wakeAt, 2000);
    const step = host.wake(2000);
    assert.deepEqual(
      step.dropped.map((exit) => exit.outcome),
      ["rejected-no-endpoints", "rejected-no-endpoints"],
    );
    host.enqueue(item("d", 2001), 2001);
    const down = host.shutdown(2002);
    assert.deepEqual(ids(down, "dropped"), ["d"]);
    assert.equal(down.dropped[0]!.outcome, "rejected-shutting-down");
    assert.equal(host.enqueue(item("e", 2003), 2003).dropped[0]!.outcome, "rejected-shutting-down");
  });

  it("loses nothing and never exceeds capacity over seeded random event sequences", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const random = seededRandom(seed);
      const capacity = 3;
      const detector = concurrencyDetector(
        { concurrencyMode: "requests", maxConcurrency: capacity, maxTokenConcurrency: 1e6, headroom: 0 },
        "cd",
      );
      const config = {
        saturationDetector: { pluginRef: "cd" },
        defaultRequestTTL: "300ms",
        enableEviction: true,
      };
      const runtime = testController(config, [detector]);
      const endpoints = [endpoint("ep-a")];
      const host = new VirtualFlowHost({ runtime, endpoints: () => endpoints });
      const ended = new Map<string, string>();
      const finishAt = new Map<string, number>();
      let wakeAt: number | undefined;
      const apply = (step: VirtualFlowStep, now: number) => {
        for (const exit of step.dropped) ended.set(exit.item.id, exit.outcome);
        for (const exit of step.evicted) finishAt.set(exit.item.id, now);
        wakeAt = step.wakeAt;
        for (const exit of step.dispatched) {
          finishAt.set(exit.item.id, now + 20 + Math.floor(random() * 200));
          apply(host.placed(exit.item.id, now, "ep-a"), now);
          assert.ok(detector.loadOf("ep-a").requests <= capacity, `seed ${seed}: over capacity`);
        }
      };
      let now = 0;
      for (let n = 0; n < 400; n++) {
        now += Math.floor(random() * 30);
        for (const [id, at] of [...finishAt].sort((a, b) => a[1] - b[1])) {
          if (at > now) break;
          finishAt.delete(id);
          ended.set(id, ended.get(id) ?? "completed");
          apply(host.completed(id, undefined, at), at);
        }
        if (wakeAt !== undefined && wakeAt <= now) apply(host.wake(now), now);
        const priority = random() < 0.3 ? -1 : Math.floor(random() * 3);
        apply(host.enqueue(item(`s${seed}-${n}`, now, { priority }), now), now);
      }
      apply(host.shutdown(now), now);
      for (const id of [...finishAt.keys()]) apply(host.completed(id, undefined, now), now);
      assert.equal(ended.size + finishAt.size, 400, `seed ${seed}: every request ended once`);
      const { inFlight, outcomes } = runtime.controller.stats();
      assert.equal(inFlight, 0);
      const queueOutcomes = Object.values(outcomes).reduce((a, b) => a + b, 0) - outcomes.evicted;
      assert.equal(queueOutcomes, 400, `seed ${seed}: one queue outcome per request`);
      assert.equal(detector.loadOf("ep-a").requests, 0);
      assert.ok([...ended.values()].includes("rejected-ttl-expired"), `seed ${seed}: overload expires some`);
    }
  });
});
