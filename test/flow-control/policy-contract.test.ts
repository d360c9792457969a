/**
 * The contract of each flow-control role, run against every registered plugin of that role:
 * usage-limit ceilings are numbers ≥ 0, and a band open at some saturation has every higher-ranked
 * band open too (what strict priority in properties.test.ts rests on); ordering keys are never NaN and the same item gets the same key;
 * eviction orders are strict (irreflexive, asymmetric, transitive) and filters deterministic;
 * saturation is a finite number ≥ 0, 1 for an empty pool, never lower when an endpoint gets busier;
 * admitters never deny a non-sheddable request nor a sheddable one on an idle pool, and deny with
 * an error value. Every registered flow-control plugin belongs to one of these roles.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LlmdError } from "../../src/api/errors.ts";
import { builtinDefinitions, createSample } from "../../src/config/testing.ts";
import type { Endpoint } from "../../src/endpoints/endpoint.ts";
import { flowControlPlugins } from "../../src/flow-control/plugins.ts";
import { endpoint, item, seededRandom } from "../../src/flow-control/test-helpers.ts";
import type {
  CeilingQuery,
  EvictionFilter,
  EvictionOrderPolicy,
  InFlightItem,
  OrderingPolicy,
  SaturationDetector,
  UsageLimitPolicy,
} from "../../src/flow-control/types.ts";
import type { Plugin } from "../../src/plugin/types.ts";
import { makeContext } from "../../src/scheduler/framework/testing.ts";

const plugins = builtinDefinitions().map((d) => createSample(d.type));
const ofKind = <T extends Plugin>(kind: string) =>
  plugins.filter((p) => (p as { kind?: string }).kind === kind) as T[];
type Admitter = Plugin & { admit(ctx: ReturnType<typeof makeContext>, e: readonly Endpoint[]): unknown };
const admitters = plugins.filter((p) => typeof (p as Partial<Admitter>).admit === "function") as Admitter[];

/** Roles the controller and admission run; fairness is exercised by properties.test.ts. */
const ROLES = [
  "fairness",
  "ordering",
  "usage-limit",
  "band-selection",
  "eviction-filter",
  "eviction-order",
  "saturation-detector",
];

function randomItems(seed: number, n: number) {
  const random = seededRandom(seed);
  return Array.from({ length: n }, (_, i) =>
    item(`i${i}`, Math.floor(random() * 1000), {
      priority: Math.floor(random() * 5) - 2,
      sloTtftMs: random() < 0.5 ? Math.floor(random() * 500) : undefined,
      ttlMs: random() < 0.5 ? Math.floor(random() * 5000) : undefined,
      sessionId: random() < 0.5 ? `s${i % 3}` : undefined,
      turn: random() < 0.3 ? Math.floor(random() * 8) : undefined,
    }),
  );
}

describe("usage-limit policies", () => {
  for (const policy of ofKind<UsageLimitPolicy>("usage-limit")) {
    test(`${policy.type}: ceilings ≥ 0; a band open means every higher band is open`, () => {
      const random = seededRandom(11);
      for (let q = 0; q < 500; q++) {
        const bandCount = 1 + Math.floor(random() * 6);
        const priorities = [
          ...new Set(Array.from({ length: bandCount }, () => Math.floor(random() * 20) - 10)),
        ];
        priorities.sort((a, b) => b - a);
        const saturation = random() < 0.1 ? 1 + random() : random();
        const attempt = Math.floor(random() * 100);
        const ceilings = priorities.map((priority, rank) => {
          const query: CeilingQuery = {
            priority,
            rank,
            bandCount: priorities.length,
            maxPriority: priorities[0]!,
            minPriority: priorities[priorities.length - 1]!,
            saturation,
            attempt,
          };
          return policy.ceiling(query);
        });
        for (const c of ceilings) assert.ok(c >= 0, `ceiling ${c}`);
        const open = ceilings.map((c) => saturation < c);
        for (let r = 1; r < open.length; r++)
          assert.ok(
            !open[r] || open[r - 1],
            `rank ${r} open, rank ${r - 1} not: ${ceilings} at ${saturation}`,
          );
      }
    });
  }
});

describe("ordering policies", () => {
  for (const policy of ofKind<OrderingPolicy>("ordering")) {
    test(`${policy.type}: keys are numbers, the same item gets the same key`, () => {
      const again = createSample(policy.type) as OrderingPolicy;
      for (const it of randomItems(3, 200)) {
        for (const ttl of [0, 1000, Number.POSITIVE_INFINITY]) {
          const key = policy.sortKey(it, ttl);
          assert.ok(!Number.isNaN(key), `NaN key for ${JSON.stringify(it)}`);
          assert.equal(again.sortKey(it, ttl), key);
        }
      }
    });
  }
});

describe("eviction policies", () => {
  const random = seededRandom(5);
  const candidates: InFlightItem[] = randomItems(9, 40).map((it) => ({
    item: it,
    dispatchedAt: Math.floor(random() * 50),
  }));
  for (const policy of ofKind<EvictionOrderPolicy>("eviction-order")) {
    test(`${policy.type}: a strict order`, () => {
      for (const a of candidates) {
        assert.equal(policy.before(a, a), false, "irreflexive");
        for (const b of candidates) {
          if (policy.before(a, b)) assert.equal(policy.before(b, a), false, "asymmetric");
          for (const c of candidates)
            if (policy.before(a, b) && policy.before(b, c)) assert.ok(policy.before(a, c), "transitive");
        }
      }
    });
  }
  for (const policy of ofKind<EvictionFilter>("eviction-filter")) {
    test(`${policy.type}: deterministic, and not every request is evictable`, () => {
      const again = createSample(policy.type) as EvictionFilter;
      const verdicts = candidates.map((c) => policy.evictable(c));
      assert.deepEqual(
        candidates.map((c) => again.evictable(c)),
        verdicts,
      );
      assert.ok(verdicts.includes(false), "protects no request");
    });
  }
});

function pool(seed: number, n: number): Endpoint[] {
  const random = seededRandom(seed);
  return Array.from({ length: n }, (_, i) =>
    endpoint(`e${i}`, {
      waitingQueueSize: Math.floor(random() * 8),
      kvCacheUsagePercent: random(),
      dispatchedSinceScrape: Math.floor(random() * 2),
      updatedAtMs: random() < 0.2 ? 0 : 1,
    }),
  );
}

describe("saturation detectors", () => {
  for (const detector of ofKind<SaturationDetector>("saturation-detector")) {
    test(`${detector.type}: finite, ≥ 0, 1 when empty, never lower for a busier endpoint`, () => {
      assert.equal(detector.saturation([], 10), 1);
      for (let seed = 1; seed <= 40; seed++) {
        const endpoints = pool(seed, 1 + (seed % 5));
        const s = detector.saturation(endpoints, 10);
        assert.ok(Number.isFinite(s) && s >= 0, `saturation ${s}`);
        assert.equal((createSample(detector.type) as SaturationDetector).saturation(endpoints, 10), s);
        for (const e of endpoints) assert.equal(typeof detector.endpointSaturated(e, 10), "boolean");
        const stale = detector.staleEndpoints?.(endpoints, 10);
        if (stale !== undefined) assert.ok(stale >= 0 && stale <= endpoints.length, `stale ${stale}`);
        const busier = endpoints.map((e, i) =>
          i === 0
            ? {
                ...e,
                metrics: {
                  ...e.metrics,
                  waitingQueueSize: e.metrics.waitingQueueSize + 3,
                  kvCacheUsagePercent: 1,
                },
              }
            : e,
        );
        assert.ok(detector.saturation(busier, 10) >= s, "a busier endpoint lowered saturation");
      }
    });
  }
});

describe("admitters", () => {
  for (const admitter of admitters) {
    test(`${admitter.type}: admits non-sheddable requests and an idle pool; denies with a value`, () => {
      const idle = [endpoint("a", { updatedAtMs: 1 }), endpoint("b", { updatedAtMs: 1 })];
      const busy = pool(2, 4).map((e) => ({ ...e, metrics: { ...e.metrics, waitingQueueSize: 50 } }));
      for (let k = 0; k < 50; k++) {
        for (const endpoints of [idle, busy])
          assert.equal(admitter.admit(makeContext({ priority: k % 3 }), endpoints), undefined);
        assert.equal(admitter.admit(makeContext({ priority: -1 }), idle), undefined, "shed on an idle pool");
        const verdict = admitter.admit(makeContext({ priority: -1 }), busy);
        assert.ok(verdict === undefined || verdict instanceof LlmdError, "a denial is an LlmdError value");
      }
    });
  }
});

test("every registered flow-control plugin has a role covered here or in properties.test.ts", () => {
  for (const definition of flowControlPlugins) {
    const plugin = createSample(definition.type);
    const kind = (plugin as { kind?: string }).kind;
    assert.ok(
      (kind !== undefined && ROLES.includes(kind)) || admitters.some((a) => a.type === plugin.type),
      `${definition.type} (kind ${kind}) is in no role`,
    );
  }
  for (const kind of ["usage-limit", "ordering", "eviction-order", "eviction-filter", "saturation-detector"])
    assert.ok(ofKind(kind).length > 0, kind);
});
