/**
 * Property tests of the flow controller over seeded random operation sequences, for every
 * combination of the registered policies it runs (every fairness × every ordering policy, each with
 * every usage-limit policy; eviction and band-selection policies in turn): nothing is lost (every
 * enqueued item ends exactly once), strict priority is never inverted while a higher band can
 * dispatch, dispatch is work-conserving (whenever some band may dispatch, something is dispatched),
 * and a fairness policy only ever picks one of the band's active flows. A policy registered later
 * is covered without editing this file.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtinDefinitions, createSample } from "../../src/config/testing.ts";
import { flowControlConfigSchema, type FlowControlConfigInput } from "../../src/flow-control/config.ts";
import { FlowController, type FlowPolicies } from "../../src/flow-control/controller.ts";
import { item, seededRandom } from "../../src/flow-control/test-helpers.ts";
import type {
  BandSelectionPolicy,
  EvictionFilter,
  EvictionOrderPolicy,
  FairnessPolicy,
  FlowExit,
  OrderingPolicy,
  UsageLimitPolicy,
} from "../../src/flow-control/types.ts";
import type { Plugin } from "../../src/plugin/types.ts";

/** Registered plugins of one flow-control role (`kind`), created from their sample parameters. */
function ofKind<T extends Plugin>(kind: string): T[] {
  return builtinDefinitions()
    .map((d) => createSample(d.type))
    .filter((p) => (p as { kind?: string }).kind === kind) as T[];
}

const fairness = ofKind<FairnessPolicy>("fairness");
const ordering = ofKind<OrderingPolicy>("ordering");
const usageLimits = ofKind<UsageLimitPolicy>("usage-limit");
const evictionFilters = ofKind<EvictionFilter>("eviction-filter");
const evictionOrders = ofKind<EvictionOrderPolicy>("eviction-order");
const bandSelections: (BandSelectionPolicy | undefined)[] = [
  undefined,
  ...ofKind<BandSelectionPolicy>("band-selection"),
];

/** Queue shapes the policies run under (limits, TTLs, eviction); refs are filled per combination. */
const SCENARIOS: Record<string, FlowControlConfigInput> = {
  "request cap, eviction": { maxRequests: 40, defaultRequestTTL: "3s", enableEviction: true },
  "byte cap, small sheddable band, eviction": {
    maxBytes: "20k",
    priorityBands: [{ priority: -1, maxRequests: 5 }],
    enableEviction: true,
  },
  "no-endpoint TTL": { noEndpointRequestTTL: "1s" },
  "no TTL, capped bands": { defaultPriorityBand: { maxRequests: 15 }, defaultRequestTTL: "0s" },
};

interface Combination {
  name: string;
  fairness: FairnessPolicy;
  ordering: OrderingPolicy;
  /** Policies of the negative bands, so bands with different policies run side by side. */
  negative: { fairness: FairnessPolicy; ordering: OrderingPolicy };
  usageLimit: UsageLimitPolicy;
  evictionFilter: EvictionFilter;
  evictionOrder: EvictionOrderPolicy;
  bandSelection: BandSelectionPolicy | undefined;
}

/** Every fairness × ordering × usage-limit triple; the other roles and the negative bands rotate. */
function combinations(): Combination[] {
  const out: Combination[] = [];
  const at = <T>(list: readonly T[], i: number) => list[i % list.length]!;
  for (const [fi, f] of fairness.entries()) {
    for (const [oi, o] of ordering.entries()) {
      for (const u of usageLimits) {
        const i = out.length;
        const bandSelection = at(bandSelections, i);
        out.push({
          name: `${f.type} + ${o.type} + ${u.type}${bandSelection ? ` + ${bandSelection.type}` : ""}`,
          fairness: f,
          ordering: o,
          negative: { fairness: at(fairness, fi + 1), ordering: at(ordering, oi + 1) },
          usageLimit: u,
          evictionFilter: at(evictionFilters, i),
          evictionOrder: at(evictionOrders, i),
          bandSelection,
        });
      }
    }
  }
  return out;
}

/** A fairness policy that also asserts each pick is one of the band's active flows. */
function checked(policy: FairnessPolicy): FairnessPolicy {
  return {
    ...policy,
    pickFlow(band, now) {
      const picked = policy.pickFlow(band, now);
      assert.ok(
        picked === undefined || band.activeFlows.includes(picked),
        `${policy.type} picked a foreign flow`,
      );
      return picked;
    },
  };
}

/** A controller with the combination's policies, each freshly created (policies keep state). */
function controllerFor(c: Combination, scenario: FlowControlConfigInput): FlowController {
  const fresh = <T extends Plugin>(p: T) => createSample(p.type) as T;
  const byRef = new Map<string, Plugin>();
  for (const p of [c.fairness, c.ordering, c.negative.fairness, c.negative.ordering])
    if (!byRef.has(p.type)) byRef.set(p.type, fresh(p));
  const template = (f: FairnessPolicy, o: OrderingPolicy) => ({
    fairnessPolicyRef: f.type,
    orderingPolicyRef: o.type,
  });
  const config = flowControlConfigSchema.parse({
    ...scenario,
    defaultPriorityBand: { ...scenario.defaultPriorityBand, ...template(c.fairness, c.ordering) },
    defaultNegativePriorityBand: template(c.negative.fairness, c.negative.ordering),
  });
  const policies: FlowPolicies = {
    fairness: (ref) => checked(byRef.get(ref) as FairnessPolicy),
    ordering: (ref) => byRef.get(ref) as OrderingPolicy,
    usageLimit: fresh(c.usageLimit),
    evictionFilter: fresh(c.evictionFilter),
    evictionOrder: fresh(c.evictionOrder),
    ...(c.bandSelection ? { bandSelection: fresh(c.bandSelection) } : {}),
  };
  return new FlowController({ config, policies });
}

/** Band priorities in the order the controller tries them (band selection first, then the rest). */
function tryOrder(c: Combination, priorities: number[]): number[] {
  const desc = [...priorities].sort((a, b) => b - a);
  const chosen = (c.bandSelection?.order(desc) ?? []).filter((p) => desc.includes(p));
  return [...new Set([...chosen, ...desc])];
}

function runSequence(c: Combination, scenario: FlowControlConfigInput, seed: number) {
  const random = seededRandom(seed);
  const controller = controllerFor(c, scenario);
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
          ttlMs: random() < 0.1 ? Math.floor(random() * 2000) : undefined,
          inputTokens: Math.floor(random() * 500),
          sessionId: random() < 0.5 ? `s${Math.floor(random() * 3)}` : undefined,
        }),
      );
      enqueued.push(id);
      if (result.outcome !== "queued") record({ item: item(id, now), outcome: result.outcome, queuedMs: 0 });
    } else if (op < 0.7) {
      const saturation = random() * 1.4;
      checkDispatch(c, controller, now, saturation, record, inFlight);
    } else if (op < 0.8 && inFlight.length > 0) {
      const id = inFlight.splice(Math.floor(random() * inFlight.length), 1)[0]!;
      assert.ok(controller.onCompleted(id, { promptTokens: 10, completionTokens: 20, cachedTokens: 0 }, now));
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

function checkDispatch(
  c: Combination,
  controller: FlowController,
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
  // A band open under a usage-limit policy has every higher band open too (policy-contract.test.ts),
  // so every band tried before the dispatching one was closed or empty.
  const order = tryOrder(
    c,
    before.bands.map((band) => band.priority),
  );
  const earlier = order.slice(0, order.indexOf(exit.item.priority));
  const waiting = before.bands.filter((band) => earlier.includes(band.priority) && band.requests > 0);
  assert.deepEqual(
    waiting.map((band) => band.priority),
    [],
    `band ${exit.item.priority} dispatched first`,
  );
}

function checkEndings({ enqueued, endings, stats }: ReturnType<typeof runSequence>) {
  assert.ok(enqueued.length > 150);
  let dispatchedTotal = 0;
  for (const id of enqueued) {
    const ends = endings.get(id) ?? [];
    const finals = ends.filter((end) => end.startsWith("final:"));
    const dispatched = ends.filter((end) => end === "dispatched").length;
    const evicted = finals.includes("final:evicted");
    dispatchedTotal += dispatched;
    // Exactly one of: dispatched (maybe later evicted), or rejected; eviction only after dispatch.
    assert.ok(dispatched <= 1, `${id} dispatched twice`);
    assert.equal(dispatched + finals.length - (evicted ? 1 : 0), 1, `${id} ended as ${ends.join(",")}`);
    if (evicted) assert.equal(dispatched, 1, `${id} evicted without dispatch`);
  }
  assert.ok(dispatchedTotal > 0, "nothing was ever dispatched");
  assert.equal(stats.requests, 0);
}

describe("flow-control properties over every policy combination (seeded random operations)", () => {
  const scenarios = Object.entries(SCENARIOS);
  for (const [i, c] of combinations().entries()) {
    it(c.name, () => {
      for (const [s, [scenarioName, scenario]] of scenarios.entries()) {
        const seed = 1 + i * scenarios.length + s;
        try {
          checkEndings(runSequence(c, scenario, seed));
        } catch (error) {
          throw new Error(`${scenarioName}, seed ${seed}: ${(error as Error).message}`, { cause: error });
        }
      }
    });
  }

  it("the combinations cover every registered fairness, ordering and usage-limit policy", () => {
    const all = combinations();
    assert.equal(all.length, fairness.length * ordering.length * usageLimits.length);
    for (const [role, list] of [
      ["fairness", fairness],
      ["ordering", ordering],
      ["usage-limit", usageLimits],
      ["eviction-filter", evictionFilters],
      ["eviction-order", evictionOrders],
    ] as const) {
      assert.ok(list.length > 0, `no ${role} policy registered`);
      for (const p of list)
        assert.ok(
          all.some((c) => Object.values(c).includes(p)),
          `${role} ${p.type} is never run`,
        );
    }
  });

  it("strict priority: with the static ceiling, a lower band never dispatches while a higher band waits", () => {
    for (const f of fairness) {
      for (const seed of [5, 6, 7]) {
        const random = seededRandom(seed);
        const c = combinations().find(
          (x) => x.fairness === f && x.usageLimit.type === "static-usage-limit-policy",
        )!;
        const controller = controllerFor({ ...c, bandSelection: undefined }, {});
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
          assert.equal(
            exit?.item.priority,
            waiting[0]!.priority,
            `${f.type}: the highest waiting band dispatches`,
          );
        }
      }
    }
  });
});
