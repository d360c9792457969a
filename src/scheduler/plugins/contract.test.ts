/**
 * The shared contract every registered filter, screener, scorer and picker must honour, run against
 * each built-in definition (scheduling and flow-control plugins alike): outputs drawn from the
 * inputs, scores aligned and in [0,1], inputs never mutated, empty input accepted, deterministic.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { builtinDefinitions, createSample } from "../../config/testing.ts";
import { ROLE_LABEL } from "../../endpoints/endpoint.ts";
import { DEFAULT_PRODUCERS } from "../framework/data-keys.ts";
import { isDataProducer, isFilter, isPicker, isScorer, isScreener } from "../framework/guards.ts";
import { makeContext, makeEndpoint, seededRandom } from "../framework/testing.ts";
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type { SchedulingContext, ScoredEndpoint } from "../framework/types.ts";
import type { Plugin } from "../../plugin/types.ts";

function create(type: string, seed = 1): Plugin {
  return createSample(type, { seed });
}

const ROLES = [undefined, "decode", "prefill", "prefill-decode"];
const REVISION_LABEL = "disaggregatedset.x-k8s.io/revision";

function randomEndpoints(seed: number, n: number): Endpoint[] {
  const rand = seededRandom(seed);
  return Array.from({ length: n }, (_, i) => {
    const role = ROLES[Math.floor(rand() * ROLES.length)];
    return makeEndpoint(`e${i}`, {
      // Two DisaggregatedSet revisions, so screeners have something to screen.
      labels: { ...(role ? { [ROLE_LABEL]: role } : {}), [REVISION_LABEL]: `r${i % 2}` },
      metrics: {
        waitingQueueSize: Math.floor(rand() * 10),
        runningRequestsSize: Math.floor(rand() * 20),
        kvCacheUsagePercent: rand(),
        dispatchedSinceScrape: Math.floor(rand() * 3),
        cacheBlockSize: 16,
        cacheNumBlocks: 1000,
      },
    });
  });
}

/** A context for a 600-character prompt, with the default producers already run when `prepared`. */
function contextFor(endpoints: readonly Endpoint[], prepared: boolean): SchedulingContext {
  const ctx = makeContext({
    promptText: "shared system prompt ".repeat(30),
    headers: { "x-session-id": "s1" },
  });
  if (prepared) {
    for (const type of Object.values(DEFAULT_PRODUCERS)) {
      const producer = create(type);
      if (isDataProducer(producer)) void producer.produce(ctx, endpoints);
    }
  }
  return ctx;
}

function fingerprint(endpoints: readonly Endpoint[]): string {
  return JSON.stringify(endpoints.map((e) => [e.metadata, e.metrics, e.attributes.size]));
}

const CASES = [0, 1, 2, 5, 8].flatMap((n) =>
  [false, true].map((prepared) => ({ n, prepared, seed: 17 + n })),
);

const kinds = builtinDefinitions().map((d) => ({ type: d.type, plugin: create(d.type) }));

/** A filter's or a screener's output for `input`: both narrow the candidates. */
function narrow(plugin: Plugin, ctx: SchedulingContext, input: Endpoint[]): readonly Endpoint[] {
  if (isScreener(plugin)) return plugin.screen(ctx, input);
  assert.ok(isFilter(plugin));
  return plugin.filter(ctx, input);
}

describe("filter and screener contract", () => {
  for (const { type } of kinds.filter((k) => isFilter(k.plugin) || isScreener(k.plugin))) {
    test(type, () => {
      for (const { n, prepared, seed } of CASES) {
        const endpoints = randomEndpoints(seed, n);
        const before = fingerprint(endpoints);
        const input = [...endpoints];
        const out = narrow(create(type, seed), contextFor(endpoints, prepared), input);
        assert.ok(
          out.every((e) => endpoints.includes(e)),
          "outputs come from the input",
        );
        assert.equal(new Set(out).size, out.length, "no duplicates");
        assert.deepEqual(input, endpoints, "input array not reordered");
        assert.equal(fingerprint(endpoints), before, "endpoints not mutated");
        const again = narrow(create(type, seed), contextFor(endpoints, prepared), [...endpoints]);
        assert.deepEqual(again, out, "deterministic for the same seed");
      }
    });
  }
});

describe("scorer contract", () => {
  for (const { type } of kinds.filter((k) => isScorer(k.plugin))) {
    test(type, () => {
      for (const { n, prepared, seed } of CASES) {
        const endpoints = randomEndpoints(seed, n);
        const before = fingerprint(endpoints);
        const scorer = create(type, seed);
        assert.ok(isScorer(scorer));
        assert.ok(["affinity", "distribution", "balance"].includes(scorer.category));
        const scores = Array.from(scorer.score(contextFor(endpoints, prepared), endpoints));
        assert.equal(scores.length, n, "aligned with the endpoints");
        for (const s of scores) assert.ok(Number.isFinite(s) && s >= 0 && s <= 1, `score ${s} in [0,1]`);
        assert.equal(fingerprint(endpoints), before, "endpoints not mutated");
        const again = Array.from(
          (create(type, seed) as typeof scorer).score(contextFor(endpoints, prepared), endpoints),
        );
        assert.deepEqual(again, scores, "deterministic for the same seed");
      }
    });
  }
});

describe("picker contract", () => {
  for (const { type } of kinds.filter((k) => isPicker(k.plugin))) {
    test(type, () => {
      for (const { n, seed } of CASES) {
        const endpoints = randomEndpoints(seed, n);
        const rand = seededRandom(seed);
        const scored: ScoredEndpoint[] = endpoints.map((endpoint) => ({
          endpoint,
          score: Math.floor(rand() * 3),
        }));
        const before = JSON.stringify(scored.map((s) => [s.endpoint.metadata.key, s.score]));
        const run = () => {
          const picker = create(type, seed);
          assert.ok(isPicker(picker));
          return Array.from({ length: 4 }, () => picker.pick(makeContext(), scored).targetEndpoints);
        };
        const first = run();
        for (const targets of first) {
          assert.equal(targets.length, Math.min(1, n), "one endpoint by default, none from empty input");
          assert.ok(
            targets.every((e) => endpoints.includes(e)),
            "targets come from the candidates",
          );
        }
        assert.equal(
          JSON.stringify(scored.map((s) => [s.endpoint.metadata.key, s.score])),
          before,
          "input not mutated",
        );
        assert.deepEqual(run(), first, "deterministic for the same seed");
      }
    });
  }
});

test("the contract covers every filter, scorer and picker kind", () => {
  assert.ok(kinds.filter((k) => isFilter(k.plugin)).length >= 5);
  assert.ok(kinds.filter((k) => isScorer(k.plugin)).length >= 8);
  assert.ok(kinds.filter((k) => isPicker(k.plugin)).length >= 3);
});
