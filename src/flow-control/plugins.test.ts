import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ManualClock } from "../core/clock.ts";
import { CharChunkTokenizer } from "../tokenizer/tokenizer.ts";
import { flowControlPlugins } from "./plugins.ts";
import { item, testController } from "./test-helpers.ts";

const env = (name: string) => ({
  name,
  clock: new ManualClock(),
  tokenizer: new CharChunkTokenizer(),
  lookup: () => undefined,
});

describe("flowControlPlugins", () => {
  it("has unique llm-d type names", () => {
    const types = flowControlPlugins.map((definition) => definition.type);
    assert.equal(new Set(types).size, types.length);
    for (const type of [
      "global-strict-fairness-policy",
      "program-aware-fairness",
      "utilization-detector",
      "probabilistic-admitter",
      "sheddable-eviction-filter",
    ]) {
      assert.ok(types.includes(type), type);
    }
  });

  for (const definition of flowControlPlugins) {
    it(`${definition.type}: creates an instance named after the config and rejects unknown parameters`, () => {
      const input = definition.type === "priority-holdback-policy" ? { minCeiling: 0.5 } : undefined;
      const plugin = definition.create(definition.parameters.parse(input), env(`my-${definition.type}`));
      assert.equal(plugin.type, definition.type);
      assert.equal(plugin.name, `my-${definition.type}`);
      assert.equal(definition.parameters.safeParse({ ...input, bogusField: 1 }).success, false);
    });
  }

  it("parses durations and validates ranges in parameters", () => {
    const detector = flowControlPlugins.find((definition) => definition.type === "utilization-detector")!;
    assert.deepEqual(detector.parameters.parse({ metricsStalenessThreshold: "2s" }), {
      queueDepthThreshold: 5,
      kvCacheUtilThreshold: 0.8,
      metricsStalenessThreshold: 2000,
      headroom: 0,
    });
    assert.equal(detector.parameters.safeParse({ queueDepthThreshold: -1 }).success, false);
    const holdback = flowControlPlugins.find((definition) => definition.type === "priority-holdback-policy")!;
    assert.equal(holdback.parameters.safeParse({}).success, false, "minCeiling is required");
  });
});

describe("createFlowController", () => {
  it("resolves refs to configured instances, else built-in defaults, and rejects wrong kinds", () => {
    const runtime = testController({ saturationDetector: { pluginRef: "concurrency-detector" } });
    assert.equal(runtime.detector.type, "concurrency-detector");
    assert.throws(
      () => testController({ defaultPriorityBand: { fairnessPolicyRef: "missing" } }),
      /no plugin named "missing"/,
    );
    assert.throws(
      () => testController({ defaultPriorityBand: { orderingPolicyRef: "round-robin-fairness-policy" } }),
      /not a ordering plugin/,
    );
    const { controller } = testController({
      priorityBands: [{ priority: 1, orderingPolicyRef: "fcfs-ordering-policy" }],
    });
    controller.enqueue(item("a", 0, { priority: 1 }));
    assert.equal(controller.nextDispatch(1, 0)?.item.id, "a");
  });
});
