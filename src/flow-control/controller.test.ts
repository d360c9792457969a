import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toOpenAIError } from "../api/errors.ts";
import type { FlowObserver } from "./observer.ts";
import { flowOutcomeError } from "./outcome-errors.ts";
import { item, testController } from "./test-helpers.ts";
import type { FlowExit } from "./types.ts";

const ids = (exits: readonly (FlowExit | undefined)[]) => exits.map((exit) => exit?.item.id);

function drain(controller: ReturnType<typeof testController>["controller"], now: number, saturation = 0) {
  const out: string[] = [];
  for (
    let exit = controller.nextDispatch(now, saturation);
    exit;
    exit = controller.nextDispatch(now, saturation)
  ) {
    out.push(exit.item.id);
  }
  return out;
}

describe("FlowController dispatch order", () => {
  it("serves higher bands first and FCFS inside a band", () => {
    const { controller } = testController();
    controller.enqueue(item("low-1", 1, { priority: -5 }));
    controller.enqueue(item("mid-1", 2));
    controller.enqueue(item("high-1", 3, { priority: 10 }));
    controller.enqueue(item("mid-2", 4));
    controller.enqueue(item("high-2", 5, { priority: 10 }));
    assert.deepEqual(drain(controller, 10), ["high-1", "high-2", "mid-1", "mid-2", "low-1"]);
  });

  it("holds every band while saturation is at or above the ceiling, then releases", () => {
    const { controller } = testController();
    controller.enqueue(item("a", 0));
    assert.equal(controller.dispatchable(1), false);
    assert.equal(controller.nextDispatch(1, 1.2), undefined);
    assert.equal(controller.dispatchable(0.99), true);
    assert.equal(controller.nextDispatch(2, 0.99)?.item.id, "a");
  });

  it("reports queue wait on dispatch", () => {
    const { controller } = testController();
    controller.enqueue(item("a", 100));
    assert.equal(controller.nextDispatch(350, 0)?.queuedMs, 250);
  });
});

describe("FlowController capacity", () => {
  const cases = [
    { name: "band maxRequests", config: { priorityBands: [{ priority: 0, maxRequests: 2 }] }, bytes: 1 },
    { name: "global maxRequests", config: { maxRequests: "2" }, bytes: 1 },
    { name: "global maxBytes", config: { maxBytes: "250" }, bytes: 100 },
    { name: "band maxBytes", config: { defaultPriorityBand: { maxBytes: 250 } }, bytes: 100 },
  ];
  for (const { name, config, bytes } of cases) {
    it(`rejects past ${name}: 429 saturated, or 503 no-endpoints while the pool is empty`, () => {
      const { controller } = testController(config);
      assert.equal(controller.enqueue(item("a", 0, { bytes })).outcome, "queued");
      assert.equal(controller.enqueue(item("b", 0, { bytes })).outcome, "queued");
      assert.equal(controller.enqueue(item("c", 0, { bytes })).outcome, "rejected-saturated");
      controller.setHasEndpoints(false);
      assert.equal(controller.enqueue(item("d", 0, { bytes })).outcome, "rejected-no-endpoints");
      controller.nextDispatch(1, 0);
      assert.equal(controller.enqueue(item("e", 1, { bytes })).outcome, "queued");
    });
  }

  it("rejects a duplicate id as a bug", () => {
    const { controller } = testController();
    controller.enqueue(item("a", 0));
    assert.throws(() => controller.enqueue(item("a", 1)), /already queued/);
  });
});

describe("FlowController TTL, cancel and shutdown", () => {
  it("expires at the band TTL with 429 and reports the next deadline", () => {
    const { controller } = testController({
      defaultRequestTTL: "10s",
      priorityBands: [{ priority: 1, defaultRequestTTL: "2s" }],
    });
    controller.enqueue(item("short", 0, { priority: 1 }));
    controller.enqueue(item("long", 0));
    controller.enqueue(item("custom", 0, { ttlMs: 500 }));
    assert.equal(controller.nextDeadline(), 500);
    assert.deepEqual(controller.tick(499), []);
    assert.deepEqual(ids(controller.tick(500)), ["custom"]);
    const expired = controller.tick(2000);
    assert.deepEqual(ids(expired), ["short"]);
    assert.equal(expired[0]?.outcome, "rejected-ttl-expired");
    assert.equal(controller.nextDeadline(), 10_000);
  });

  it("uses noEndpointRequestTTL with 503 no-endpoints while the pool is empty", () => {
    const { controller } = testController({ defaultRequestTTL: "10s", noEndpointRequestTTL: "1s" });
    controller.enqueue(item("a", 0));
    controller.setHasEndpoints(false);
    assert.equal(controller.nextDeadline(), 1000);
    const [exit] = controller.tick(1000);
    assert.equal(exit?.outcome, "rejected-no-endpoints");
  });

  it("never expires with a 0s TTL", () => {
    const { controller } = testController({ defaultRequestTTL: "0s" });
    controller.enqueue(item("a", 0));
    assert.equal(controller.nextDeadline(), undefined);
    assert.deepEqual(controller.tick(1e12), []);
    assert.equal(controller.isQueued("a"), true);
  });

  it("cancels a queued item with rejected-context-cancelled", () => {
    const { controller } = testController();
    controller.enqueue(item("a", 0));
    assert.equal(controller.cancel("a", 5)?.outcome, "rejected-context-cancelled");
    assert.equal(controller.cancel("a", 6), undefined);
    assert.equal(controller.nextDispatch(7, 0), undefined);
    assert.equal(controller.nextDeadline(), undefined);
  });

  it("answers everything queued on shutdown and refuses new work", () => {
    const { controller } = testController();
    controller.enqueue(item("a", 0));
    controller.enqueue(item("b", 0, { priority: 3 }));
    const exits = controller.shutdown(1);
    assert.deepEqual(ids(exits).sort(), ["a", "b"]);
    assert.ok(exits.every((exit) => exit.outcome === "rejected-shutting-down"));
    assert.equal(controller.enqueue(item("c", 2)).outcome, "rejected-shutting-down");
    assert.equal(controller.stats().requests, 0);
  });
});

describe("FlowController eviction", () => {
  function blockedWithSheddableInFlight(enableEviction: boolean) {
    const { controller } = testController({ enableEviction });
    controller.enqueue(item("shed-old", 0, { priority: -1 }));
    controller.enqueue(item("shed-new", 1, { priority: -1 }));
    controller.enqueue(item("shed-lowest", 1, { priority: -9 }));
    controller.enqueue(item("normal", 1, { priority: 0 }));
    drain(controller, 2);
    controller.enqueue(item("vip", 3, { priority: 5 }));
    return controller;
  }

  it("evicts the lowest-priority in-flight sheddable request, one per blocked waiter", () => {
    const controller = blockedWithSheddableInFlight(true);
    assert.equal(controller.evictOne(4, 0.5), undefined, "not blocked: no eviction");
    const first = controller.evictOne(4, 1.5);
    assert.equal(first?.item.id, "shed-lowest");
    assert.equal(first?.outcome, "evicted");
    assert.equal(controller.evictOne(4, 1.5), undefined, "one waiter, one victim");
    assert.equal(controller.onCompleted("shed-lowest", undefined, 5), false);
    assert.equal(controller.nextDispatch(6, 0.5)?.item.id, "vip");
  });

  it("never evicts non-sheddable work or when eviction is disabled", () => {
    assert.equal(blockedWithSheddableInFlight(false).evictOne(4, 1.5), undefined);
    const { controller } = testController({ enableEviction: true });
    controller.enqueue(item("normal", 0));
    drain(controller, 1);
    controller.enqueue(item("vip", 2, { priority: 5 }));
    assert.equal(controller.evictOne(3, 2), undefined);
  });

  it("orders victims of equal priority most recently dispatched first", () => {
    const { controller } = testController({ enableEviction: true });
    controller.enqueue(item("old", 0, { priority: -1 }));
    controller.nextDispatch(1, 0);
    controller.enqueue(item("new", 1, { priority: -1 }));
    controller.nextDispatch(2, 0);
    controller.enqueue(item("vip", 3, { priority: 1 }));
    assert.equal(controller.evictOne(4, 1)?.item.id, "new");
  });
});

describe("FlowController reporting", () => {
  it("emits events and keeps stats per band and flow", () => {
    const events: string[] = [];
    const observer: FlowObserver = {
      enqueued: (queued) => events.push(`enqueued:${queued.id}`),
      exited: (exit) => events.push(`${exit.outcome}:${exit.item.id}`),
      completed: (done, usage) => events.push(`completed:${done.id}:${usage?.completionTokens}`),
    };
    const { controller } = testController({ maxRequests: 2 }, [], observer);
    controller.enqueue(item("a", 0, { fairnessId: "t1", priority: 2, bytes: 7 }));
    controller.enqueue(item("b", 0, { fairnessId: "t2" }));
    controller.enqueue(item("c", 0));
    const stats = controller.stats();
    assert.equal(stats.requests, 2);
    assert.equal(stats.bytes, 107);
    assert.deepEqual(
      stats.bands.map((band) => [band.priority, band.flows.map((flow) => [flow.fairnessId, flow.bytes])]),
      [
        [2, [["t1", 7]]],
        [0, [["t2", 100]]],
      ],
    );
    controller.nextDispatch(1, 0);
    assert.equal(
      controller.onCompleted("a", { promptTokens: 1, completionTokens: 3, cachedTokens: 0 }, 2),
      true,
    );
    assert.deepEqual(events, [
      "enqueued:a",
      "enqueued:b",
      "rejected-saturated:c",
      "dispatched:a",
      "completed:a:3",
    ]);
    assert.equal(controller.stats().outcomes["rejected-saturated"], 1);
    assert.equal(controller.stats().outcomes.dispatched, 1);
  });

  it("maps outcomes to llm-d wire errors with dropped reason and Retry-After", () => {
    const table = [
      ["rejected-saturated", 429, "1"],
      ["rejected-no-endpoints", 503, "5"],
      ["rejected-ttl-expired", 429, "1"],
      ["rejected-context-cancelled", 503, undefined],
      ["rejected-shutting-down", 503, "1"],
      ["evicted", 429, "1"],
    ] as const;
    for (const [outcome, status, retryAfter] of table) {
      const wire = toOpenAIError(flowOutcomeError(outcome));
      assert.equal(wire.status, status, outcome);
      assert.equal(wire.headers["x-llm-d-request-dropped-reason"], outcome);
      assert.equal(wire.headers["retry-after"], retryAfter, outcome);
    }
    assert.equal(flowOutcomeError("dispatched"), undefined);
  });
});
