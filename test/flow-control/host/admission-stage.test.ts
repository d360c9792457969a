/**
 * The lifecycle's admission stage from a real EndpointPickerConfig, hosted by the gateway's flow
 * gate: the gate reads the configured concurrency detector (the scheduler's own instance), and its
 * metrics land in the host registry.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { LlmdError } from "../../../src/api/errors.ts";
import { type Clock, ManualClock, wallClock } from "../../../src/core/clock.ts";
import { loadConfig } from "../../../src/config/index.ts";
import { flowGateFor } from "../../../src/gateway/admission.ts";
import { createAdmissionStage } from "../../../src/lifecycle/admission.ts";
import type { ConcurrencyDetector } from "../../../src/flow-control/policies/concurrency-detector.ts";
import { endpoint, item } from "../../../src/flow-control/test-helpers.ts";
import { FakePool } from "./fixtures.ts";

const CONFIG = `
apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
featureGates: [flowControl]
plugins:
- type: concurrency-detector
  name: limit
  parameters: {maxConcurrency: 1, concurrencyMode: requests}
- type: queue-scorer
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins: [{pluginRef: queue-scorer}, {pluginRef: max-score-picker}]
flowControl:
  saturationDetector: {pluginRef: limit}
  defaultRequestTTL: 20ms
`;

/** The same config with a `utilization-detector` named `limit` (metrics stale after 200 ms). */
const UTILIZATION = `- type: utilization-detector
  name: limit
`;

interface StageInputs {
  config: ReturnType<typeof loadConfig>;
  pool: FakePool;
  registry: Registry;
  clock?: Clock;
  poolName?: string;
}

/** The stage and its gate, as the gateway composes them. */
function hosted({ config, pool, registry, clock = wallClock, poolName }: StageInputs) {
  const stage = createAdmissionStage({
    flowControlGate: true,
    flowControl: config.flowControl,
    plugins: config.plugins,
    clock,
    endpoints: () => pool.candidates(),
    registry,
    ...(poolName ? { poolName } : {}),
  });
  return { gate: flowGateFor(stage, pool, clock)!, runtime: stage.flowControl! };
}

describe("admission stage in the flow gate", () => {
  it("wires the configured detector, the gate and the metrics into the host registry", async () => {
    const config = loadConfig(CONFIG);
    const registry = new Registry();
    const { gate, runtime } = hosted({ config, pool: new FakePool(), registry, poolName: "p" });
    assert.equal(runtime.detector, config.plugins.get("limit"));
    const signal = new AbortController().signal;
    const first = await gate.admit(item("a", 0), signal);
    assert.ok(!(first instanceof LlmdError));
    first.placed("ep-a");
    assert.equal((runtime.detector as ConcurrencyDetector).loadOf("ep-a").requests, 1);
    const second = await gate.admit(item("b", 0), signal);
    assert.ok(second instanceof LlmdError && second.droppedReason === "rejected-ttl-expired");
    first.release();
    const text = await registry.metrics();
    assert.match(text, /llm_d_epp_flow_control_requests_total\{[^}]*outcome="dispatched"\} 1/);
    assert.match(text, /llm_d_epp_flow_control_requests_total\{[^}]*outcome="rejected-ttl-expired"\} 1/);
    assert.match(
      text,
      /llm_d_epp_flow_control_dispatch_cycle_duration_seconds_count\{inference_pool="p"\} [1-9]/,
    );
    assert.match(
      text,
      /llm_d_epp_flow_control_pool_saturation\{inference_pool="p"\} 0\n/,
      "read fresh, not the last dispatch's",
    );
  });

  it("exports how many endpoints the utilization detector reads as stale", async () => {
    const config = loadConfig(
      CONFIG.replace(/- type: concurrency-detector[\s\S]*?requests\}\n/, UTILIZATION),
    );
    const registry = new Registry();
    const pool = new FakePool();
    const clock = new ManualClock(10_000);
    pool.endpoints = [
      endpoint("fresh", { updatedAtMs: 10_000 }),
      endpoint("late", { updatedAtMs: 5000, waitingQueueSize: 40 }),
    ];
    hosted({ config, pool, registry, clock });
    const text = await registry.metrics();
    assert.match(text, /llm_d_epp_flow_control_stale_endpoints\{inference_pool="default"\} 1\n/);
    // The late replica's last reading (40 waiting / threshold 5 = 8) holds: mean (0 + 8) / 2.
    assert.match(text, /llm_d_epp_flow_control_pool_saturation\{inference_pool="default"\} 4\n/);
  });
});
