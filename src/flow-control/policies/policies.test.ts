import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock } from "../../core/clock.ts";
import type { SchedulingContext, SchedulingResult } from "../../scheduler/framework/types.ts";
import { endpoint, item, seededRandom, testController } from "../test-helpers.ts";
import type { CeilingQuery } from "../types.ts";
import { concurrencyDetector } from "./concurrency-detector.ts";
import { probabilisticAdmitter, shedProbability } from "./probabilistic-admitter.ts";
import { programAwareFairness } from "./program-aware-fairness.ts";
import { turnPriorityOrdering } from "./turn-priority-ordering.ts";
import { priorityHoldback, softReflectiveCeiling, staticUsageLimit } from "./usage-limits.ts";
import { utilizationDetector } from "./utilization-detector.ts";

function order(config: Parameters<typeof testController>[0], items: ReturnType<typeof item>[], now = 1000) {
  const { controller } = testController(config);
  for (const queued of items) controller.enqueue(queued);
  const out: string[] = [];
  for (let exit = controller.nextDispatch(now, 0); exit; exit = controller.nextDispatch(now, 0))
    out.push(exit.item.id);
  return out;
}

const band = (fairnessPolicyRef: string, orderingPolicyRef = "fcfs-ordering-policy") => ({
  defaultPriorityBand: { fairnessPolicyRef, orderingPolicyRef },
});

describe("fairness policies", () => {
  const twoTenants = [
    item("a1", 1, { fairnessId: "a" }),
    item("a2", 2, { fairnessId: "a" }),
    item("a3", 3, { fairnessId: "a" }),
    item("b1", 4, { fairnessId: "b" }),
    item("b2", 5, { fairnessId: "b" }),
  ];

  it("global-strict serves the band as one FCFS queue across flows", () => {
    assert.deepEqual(order(band("global-strict-fairness-policy"), twoTenants), [
      "a1",
      "a2",
      "a3",
      "b1",
      "b2",
    ]);
  });

  it("round-robin alternates flows in fairness-id order", () => {
    assert.deepEqual(order(band("round-robin-fairness-policy"), twoTenants), ["a1", "b1", "a2", "b2", "a3"]);
  });

  it("program-aware serves the least-served program first", () => {
    const fairness = programAwareFairness({
      strategy: "las",
      lasWeightService: 1,
      lasWeightHeadWait: 0,
      lasHalfLifeSeconds: 0,
      evictionTtlSeconds: 3600,
      evictionSweepSeconds: 300,
    });
    const { controller } = testController(band("program-aware-fairness"), [fairness]);
    controller.enqueue(item("heavy-1", 0, { fairnessId: "heavy", inputTokens: 1000 }));
    controller.enqueue(item("heavy-2", 1, { fairnessId: "heavy", inputTokens: 1000 }));
    controller.enqueue(item("light-1", 2, { fairnessId: "light", inputTokens: 10 }));
    controller.enqueue(item("light-2", 3, { fairnessId: "light", inputTokens: 10 }));
    const out: string[] = [];
    for (let exit = controller.nextDispatch(10, 0); exit; exit = controller.nextDispatch(10, 0))
      out.push(exit.item.id);
    assert.deepEqual(out, ["heavy-1", "light-1", "light-2", "heavy-2"]);
    assert.equal(fairness.serviceOf("heavy", 10), 2000);
    controller.onCompleted("light-1", { promptTokens: 10, completionTokens: 50, cachedTokens: 0 }, 11);
    assert.equal(fairness.serviceOf("light", 11), 120);
  });

  it("program-aware decays service with the half-life and forgets idle programs", () => {
    const fairness = programAwareFairness({
      strategy: "las",
      lasWeightService: 0.8,
      lasWeightHeadWait: 0.2,
      lasHalfLifeSeconds: 60,
      evictionTtlSeconds: 100,
      evictionSweepSeconds: 10,
    });
    fairness.onCompleted?.(
      item("x", 0, { inputTokens: 0 }),
      { promptTokens: 0, completionTokens: 500, cachedTokens: 0 },
      0,
    );
    assert.equal(fairness.serviceOf("default-flow", 60_000), 500);
    assert.equal(fairness.programCount, 1);
    fairness.onCompleted?.(item("y", 0, { fairnessId: "other", inputTokens: 0 }), undefined, 0);
    fairness.onDispatched?.(undefined as never, item("z", 0, { fairnessId: "other" }), 200_000);
    assert.equal(fairness.programCount, 1, "default-flow idle > 100 s is swept");
  });

  it("program-aware lets a long-waiting head overtake a slightly less served program", () => {
    const fairness = programAwareFairness({
      strategy: "las",
      lasWeightService: 0.8,
      lasWeightHeadWait: 0.2,
      lasHalfLifeSeconds: 0,
      evictionTtlSeconds: 3600,
      evictionSweepSeconds: 300,
    });
    const { controller } = testController(band("program-aware-fairness"), [fairness]);
    controller.enqueue(item("warm", 0, { fairnessId: "a", inputTokens: 100 }));
    controller.nextDispatch(0, 0);
    controller.enqueue(item("b-seed", 0, { fairnessId: "b", inputTokens: 95 }));
    controller.nextDispatch(0, 0);
    controller.enqueue(item("a-waited", 0, { fairnessId: "a", inputTokens: 1 }));
    controller.enqueue(item("b-fresh", 9_000, { fairnessId: "b", inputTokens: 1 }));
    assert.equal(controller.nextDispatch(10_000, 0)?.item.id, "a-waited");
  });
});

describe("ordering policies", () => {
  it("edf orders by enqueue + effective TTL", () => {
    const items = [
      item("long", 0, { ttlMs: 5000 }),
      item("short", 10, { ttlMs: 100 }),
      item("none", 5, { ttlMs: 0 }),
    ];
    assert.deepEqual(order(band("global-strict-fairness-policy", "edf-ordering-policy"), items, 50), [
      "short",
      "long",
      "none",
    ]);
  });

  it("slo-deadline orders by arrival + TTFT SLO, missing SLO last", () => {
    const items = [
      item("none", 0),
      item("loose", 1, { sloTtftMs: 900 }),
      item("tight", 2, { sloTtftMs: 50 }),
    ];
    assert.deepEqual(order(band("global-strict-fairness-policy", "slo-deadline-ordering-policy"), items), [
      "tight",
      "loose",
      "none",
    ]);
  });

  it("fcfs breaks equal times by arrival order", () => {
    assert.deepEqual(order({}, [item("x", 5), item("y", 5), item("w", 4)]), ["w", "x", "y"]);
  });
});

describe("turn-priority ordering", () => {
  const policy = () =>
    turnPriorityOrdering({ turnCreditMs: 1000, maxCreditedTurns: 3, sessionIdleTtlMs: 60_000 });

  it("lets a session's later turn overtake a newer session, within the credit", () => {
    const turns = policy();
    const { controller } = testController(
      band("global-strict-fairness-policy", "turn-priority-ordering-policy"),
      [turns],
    );
    controller.enqueue(item("s1-t1", 0, { sessionId: "s1" }));
    controller.nextDispatch(0, 0);
    controller.enqueue(item("s1-t2", 1, { sessionId: "s1" }));
    controller.nextDispatch(1, 0);
    assert.equal(turns.turnsOf("s1"), 2);
    controller.enqueue(item("new-early", 500, { sessionId: "s2" }));
    controller.enqueue(item("s1-t3", 2000, { sessionId: "s1" }));
    controller.enqueue(item("new-old", -100, { sessionId: "s3" }));
    const out = [1, 2, 3].map(() => controller.nextDispatch(3000, 0)?.item.id);
    // s1-t3 has 2 s credit (virtual arrival 0): behind new-old (−100), ahead of new-early (500).
    assert.deepEqual(out, ["new-old", "s1-t3", "new-early"]);
  });

  it("caps the credit so a new session that waited long enough still goes first", () => {
    const turns = policy();
    assert.equal(turns.sortKey(item("t", 10_000, { turn: 50 }), Infinity), 7000);
    assert.equal(turns.sortKey(item("t", 10_000), Infinity), 10_000);
    assert.equal(turns.sortKey(item("t", 10_000, { turn: 1 }), Infinity), 9000);
  });

  it("forgets idle sessions", () => {
    const turns = policy();
    turns.onDispatched?.(item("a", 0, { sessionId: "old" }), 0);
    turns.onDispatched?.(item("b", 0, { sessionId: "new" }), 120_000);
    assert.equal(turns.sessionCount, 1);
    assert.equal(turns.turnsOf("old"), 0);
  });
});

describe("saturation detectors", () => {
  const util = utilizationDetector({
    queueDepthThreshold: 5,
    kvCacheUtilThreshold: 0.8,
    metricsStalenessThreshold: 200,
    headroom: 0.5,
  });

  it("utilization: mean of max(queue/threshold, kv/threshold), stale and empty fail closed", () => {
    const fresh = [
      endpoint("a", { waitingQueueSize: 5, kvCacheUsagePercent: 0.4, updatedAtMs: 100 }),
      endpoint("b", { waitingQueueSize: 0, kvCacheUsagePercent: 0.4, updatedAtMs: 100 }),
    ];
    assert.equal(util.saturation(fresh, 150), 0.75);
    assert.equal(util.saturation(fresh, 400), 1, "stale metrics");
    const buried = endpoint("d", { waitingQueueSize: 20, dispatchedSinceScrape: 5, updatedAtMs: 100 });
    assert.equal(util.saturation([buried], 400), 5, "stale never reads lighter than the last scrape");
    assert.equal(util.saturation([endpoint("n", { updatedAtMs: 0 })], 0), 1, "never scraped");
    assert.equal(util.saturation([], 0), 1, "empty pool");
    const burst = [endpoint("c", { waitingQueueSize: 1, dispatchedSinceScrape: 4, updatedAtMs: 100 })];
    assert.equal(util.saturation(burst, 100), 1, "dispatched-since-scrape counts as queue");
  });

  it("utilization: per-endpoint filter limit is threshold × (1 + headroom)", () => {
    assert.equal(util.endpointSaturated(endpoint("a", { waitingQueueSize: 7, updatedAtMs: 10 }), 10), false);
    assert.equal(util.endpointSaturated(endpoint("a", { waitingQueueSize: 8, updatedAtMs: 10 }), 10), true);
    assert.equal(
      util.endpointSaturated(endpoint("a", { kvCacheUsagePercent: 1.3, updatedAtMs: 10 }), 10),
      true,
    );
    assert.equal(util.endpointSaturated(endpoint("a", { updatedAtMs: 10 }), 1000), true, "stale");
  });

  it("concurrency: requests, tokens and hybrid modes over tracked in-flight load", () => {
    const endpoints = [endpoint("a"), endpoint("b")];
    const modes = { requests: 0.25, tokens: 0.5, hybrid: 0.575 } as const;
    for (const [mode, expected] of Object.entries(modes)) {
      const detector = concurrencyDetector({
        concurrencyMode: mode as keyof typeof modes,
        maxConcurrency: 4,
        maxTokenConcurrency: 1000,
        headroom: 0,
      });
      detector.track("r1", "a", 100);
      detector.track("r2", "b", 900);
      detector.track("r2", "b", 900);
      assert.equal(detector.saturation(endpoints, 0), expected, mode);
      detector.release("r1");
      detector.release("r2");
      detector.release("r2");
      assert.equal(detector.saturation(endpoints, 0), 0, `${mode} after release`);
    }
  });

  it("concurrency: counts via preRequest and releases on completion by request id", () => {
    const detector = concurrencyDetector({
      concurrencyMode: "requests",
      maxConcurrency: 1,
      maxTokenConcurrency: 10,
      headroom: 0,
    });
    const target = endpoint("a");
    const ctx = {
      request: { requestId: "r1", promptText: "abcdefgh", priority: 0 },
      state: new Map(),
      clock: new ManualClock(),
    } as unknown as SchedulingContext;
    const result: SchedulingResult = {
      primaryProfileName: "default",
      profileResults: new Map([["default", { targetEndpoints: [target], scored: [] }]]),
    };
    detector.preRequest(ctx, result);
    assert.deepEqual(detector.loadOf("a"), { requests: 1, tokens: 2 });
    assert.equal(detector.endpointSaturated(target, 0), true);
    detector.onResponseComplete?.(ctx, endpoint("elsewhere"), "natural", undefined);
    assert.deepEqual(detector.loadOf("a"), { requests: 0, tokens: 0 });
  });
});

describe("usage-limit policies", () => {
  const query = (overrides: Partial<CeilingQuery>): CeilingQuery => ({
    priority: 0,
    rank: 0,
    bandCount: 3,
    maxPriority: 10,
    minPriority: -10,
    saturation: 0.5,
    attempt: 1,
    ...overrides,
  });

  it("static: one threshold for every band", () => {
    assert.equal(staticUsageLimit(0.7).ceiling(query({ rank: 2 })), 0.7);
  });

  it("priority-holdback: linear by rank or by value", () => {
    const byRank = priorityHoldback({ shape: "linear", domain: "rank", minCeiling: 0.4, maxCeiling: 1 });
    assert.deepEqual(
      [0, 1, 2].map((rank) => byRank.ceiling(query({ rank }))),
      [1, 0.7, 0.4],
    );
    const byValue = priorityHoldback({ shape: "linear", domain: "value", minCeiling: 0.2, maxCeiling: 1 });
    assert.ok(Math.abs(byValue.ceiling(query({ priority: 5 })) - 0.8) < 1e-9);
    assert.ok(Math.abs(byValue.ceiling(query({ priority: -10 })) - 0.2) < 1e-9);
  });

  it("priority-holdback above 1 (the tenants' ours.yaml): the top band stays open past saturation 1", () => {
    // maxCeiling 2.8 by value over bands 100 / 0 / −10 keeps agents at 0.8 and batch at 0.6, as
    // minCeiling 0.6 by rank did, while chat is held only once the pool mean passes 2.8.
    const policy = priorityHoldback({ shape: "linear", domain: "value", minCeiling: 0.6, maxCeiling: 2.8 });
    const ceilings = [100, 0, -10].map((priority) =>
      policy.ceiling(query({ priority, maxPriority: 100, minPriority: -10 })),
    );
    assert.deepEqual(
      ceilings.map((c) => Number(c.toFixed(9))),
      [2.8, 0.8, 0.6],
    );
  });

  it("soft-reflective: graduated ceilings, gated bands open 1 attempt in round(sat/(1−sat))", () => {
    const policy = softReflectiveCeiling();
    assert.equal(policy.ceiling(query({ rank: 0, saturation: 0.75 })), 1);
    assert.equal(policy.ceiling(query({ rank: 1, saturation: 0.5 })), 0.75);
    const opened = [0, 1, 2, 3, 4, 5].map(
      (attempt) => policy.ceiling(query({ rank: 2, saturation: 0.75, attempt })) > 1,
    );
    assert.deepEqual(opened, [true, false, false, true, false, false]);
    assert.equal(policy.ceiling(query({ rank: 2, saturation: 1, attempt: 0 })), 0);
  });

  it("priority-holdback gates the low band while the high band still dispatches", () => {
    const holdback = priorityHoldback({ shape: "linear", domain: "rank", minCeiling: 0.5, maxCeiling: 1 });
    const { controller } = testController(
      { usageLimitPolicyPluginRef: "holdback", priorityBands: [{ priority: 1 }, { priority: 0 }] },
      [{ ...holdback, name: "holdback" }],
    );
    controller.enqueue(item("low", 0));
    controller.enqueue(item("high", 1, { priority: 1 }));
    assert.equal(controller.nextDispatch(2, 0.7)?.item.id, "high");
    assert.equal(controller.nextDispatch(2, 0.7), undefined);
    assert.equal(controller.nextDispatch(2, 0.4)?.item.id, "low");
  });
});

describe("probabilistic-admitter", () => {
  const params = {
    queueDepthThreshold: 5,
    kvCacheUtilThreshold: 0.8,
    power: 5,
    k: 300,
    metricsStalenessThreshold: 200,
  };
  const ctx = (priority: number) =>
    ({
      request: { priority },
      state: new Map(),
      clock: new ManualClock(100),
    }) as unknown as SchedulingContext;

  it("computes p = min(sat^power·k, 1)", () => {
    assert.equal(shedProbability(0, 5, 300), 0);
    assert.ok(Math.abs(shedProbability(0.2, 5, 300) - 0.096) < 1e-9);
    assert.equal(shedProbability(0.34, 5, 300), 1);
  });

  it("sheds only sheddable requests, at the computed rate", () => {
    const admitter = probabilisticAdmitter(params, "probabilistic-admitter", seededRandom(7));
    const pool = [endpoint("a", { waitingQueueSize: 1, updatedAtMs: 100 })];
    assert.equal(
      admitter.admit(ctx(0), [endpoint("a", { waitingQueueSize: 100, updatedAtMs: 100 })]),
      undefined,
    );
    let shed = 0;
    for (let i = 0; i < 4000; i++) if (admitter.admit(ctx(-1), pool)) shed += 1;
    assert.ok(Math.abs(shed / 4000 - 0.096) < 0.02, `shed rate ${shed / 4000}`);
    const error = admitter.admit(ctx(-1), [endpoint("a", { waitingQueueSize: 5, updatedAtMs: 100 })]);
    assert.equal(error?.status, 429);
    assert.equal(error?.droppedReason, "rejected-saturated");
  });
});
