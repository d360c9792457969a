import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bandSettingsFor, flowControlConfigSchema } from "./config.ts";
import { parseDurationMs, parseQuantity } from "../core/units.ts";

describe("flow-control units", () => {
  const quantities: [string | number, number | undefined][] = [
    ["10Gi", 10 * 2 ** 30],
    ["1k", 1000],
    ["500", 500],
    ["1G", 1e9],
    [42, 42],
    ["1.5k", 1500],
    ["-1", undefined],
    ["10 apples", undefined],
  ];
  for (const [input, expected] of quantities) {
    it(`parses quantity ${JSON.stringify(input)}`, () => assert.equal(parseQuantity(input), expected));
  }
  const durations: [string | number, number | undefined][] = [
    ["60s", 60_000],
    ["0s", 0],
    ["0", 0],
    ["1m30s", 90_000],
    ["250ms", 250],
    ["1h", 3_600_000],
    [2, 2000],
    ["5 s", undefined],
    ["10", undefined],
  ];
  for (const [input, expected] of durations) {
    it(`parses duration ${JSON.stringify(input)}`, () => assert.equal(parseDurationMs(input), expected));
  }
});

describe("flowControlConfigSchema", () => {
  it("fills llm-d defaults for an empty section", () => {
    const config = flowControlConfigSchema.parse({});
    assert.equal(config.maxBytes, 0);
    assert.equal(config.maxRequests, 0);
    assert.equal(config.defaultRequestTTL, 60_000);
    assert.equal(config.noEndpointRequestTTL, 60_000);
    assert.deepEqual(config.defaultPriorityBand, {
      maxBytes: 1e9,
      maxRequests: 5000,
      defaultRequestTTL: undefined,
      fairnessPolicyRef: "global-strict-fairness-policy",
      orderingPolicyRef: "fcfs-ordering-policy",
    });
    assert.deepEqual(config.defaultNegativePriorityBand, config.defaultPriorityBand);
    assert.equal(config.usageLimitPolicyPluginRef, "static-usage-limit-policy");
    assert.equal(config.saturationDetector.pluginRef, "utilization-detector");
    assert.equal(config.enableEviction, false);
  });

  it("parses the llm-d tenants-and-priorities example", () => {
    const config = flowControlConfigSchema.parse({
      saturationDetector: { pluginRef: "concurrency-detector" },
      maxBytes: "10Gi",
      maxRequests: "1k",
      defaultRequestTTL: "60s",
      priorityBands: [
        { priority: 100, maxRequests: "500", fairnessPolicyRef: "round-robin-fairness-policy" },
        { priority: 0, maxRequests: "200" },
        { priority: -10, maxRequests: "50", defaultRequestTTL: "5s" },
      ],
    });
    assert.equal(config.maxBytes, 10 * 2 ** 30);
    assert.equal(config.maxRequests, 1000);
    assert.equal(bandSettingsFor(config, 100).maxRequests, 500);
    assert.equal(bandSettingsFor(config, 100).fairnessPolicyRef, "round-robin-fairness-policy");
    assert.equal(bandSettingsFor(config, 100).maxBytes, 1e9);
    assert.equal(bandSettingsFor(config, -10).defaultRequestTTL, 5000);
    assert.equal(bandSettingsFor(config, 7).maxRequests, 5000);
  });

  it("uses the negative template for unlisted negative priorities and noEndpointRequestTTL override", () => {
    const config = flowControlConfigSchema.parse({
      defaultRequestTTL: "0s",
      noEndpointRequestTTL: "2m",
      defaultNegativePriorityBand: { maxRequests: 10 },
    });
    assert.equal(config.defaultRequestTTL, 0);
    assert.equal(config.noEndpointRequestTTL, 120_000);
    assert.equal(bandSettingsFor(config, -1).maxRequests, 10);
    assert.equal(bandSettingsFor(config, 1).maxRequests, 5000);
  });

  it("rejects unknown fields, bad quantities and duplicate bands with a path", () => {
    const cases: [unknown, string][] = [
      [{ maxQueue: 3 }, ""],
      [{ maxBytes: "lots" }, "maxBytes"],
      [{ defaultPriorityBand: { weight: 1 } }, "defaultPriorityBand"],
      [{ priorityBands: [{ priority: 1 }, { priority: 1 }] }, "priorityBands.1.priority"],
      [{ defaultRequestTTL: "soon" }, "defaultRequestTTL"],
    ];
    for (const [input, path] of cases) {
      const result = flowControlConfigSchema.safeParse(input);
      assert.equal(result.success, false, JSON.stringify(input));
      assert.equal(result.error?.issues[0]?.path.join("."), path, JSON.stringify(input));
    }
  });
});
