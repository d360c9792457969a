/**
 * The admission stage: admitters screen sheddable requests only, legacy shedding answers `shed`
 * while saturated, flow control queues, and a configured `session-state-producer` gives the
 * flow-control item its session's turns (turn-priority ordering reads them).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConfig } from "../config/index.ts";
import { ManualClock } from "../core/clock.ts";
import { makeContext, makeEndpoint } from "../scheduler/framework/testing.ts";
import type { PreRequest } from "../scheduler/framework/types.ts";
import { createAdmissionStage } from "./admission.ts";

const clock = new ManualClock(1000);
const busy = makeEndpoint("a", { metrics: { waitingQueueSize: 50, updatedAtMs: 1000 } });
const idle = makeEndpoint("b", { metrics: { updatedAtMs: 1000 } });

function stage(yaml: string, gate: boolean) {
  const config = loadConfig(`apiVersion: llm-d.ai/v1\nkind: EndpointPickerConfig\n${yaml}`, {
    clock,
    allowExperimentalPlugins: true,
  });
  return {
    config,
    stage: createAdmissionStage({
      flowControlGate: gate,
      flowControl: config.flowControl,
      plugins: config.plugins,
      clock,
      endpoints: () => [busy],
    }),
  };
}

const request = (priority: number, headers: Record<string, string> = {}) => ({
  ...makeContext({ priority, headers, bodyBytes: 120, promptText: "x".repeat(400) }).request,
});

const PROFILE = `schedulingProfiles: [{name: d, plugins: [{pluginRef: queue-scorer}, {pluginRef: max-score-picker}]}]`;

test("legacy admission sheds sheddable requests on a saturated pool, and passes the rest", () => {
  const { stage: s } = stage(`plugins: [{type: queue-scorer}, {type: max-score-picker}]\n${PROFILE}`, false);
  const shed = s.screen(request(-1), [busy]);
  assert.ok(shed instanceof Error && shed.code === "shed" && shed.droppedReason === "rejected-saturated");
  assert.equal(s.screen(request(0), [busy]), "pass");
  assert.equal(s.screen(request(-1), [idle]), "pass");
});

test("with the gate, requests queue; admitters still screen sheddable ones first", () => {
  const yaml = `featureGates: [flowControl]
plugins: [{type: probabilistic-admitter}, {type: queue-scorer}, {type: max-score-picker}]
${PROFILE}`;
  const { stage: s } = stage(yaml, true);
  assert.ok(s.flowControl);
  assert.equal(s.screen(request(0), [busy]), "queue");
  const denied = s.screen(request(-1), [busy]);
  assert.ok(denied instanceof Error && denied.code === "shed");
});

test("the flow-control item carries size, SLO, session and the session's turns", () => {
  const yaml = `featureGates: [flowControl]
plugins: [{type: session-state-producer}, {type: queue-scorer}, {type: max-score-picker}]
${PROFILE}`;
  const { stage: s, config } = stage(yaml, true);
  const producer = config.plugins.get("session-state-producer") as unknown as PreRequest;
  for (let i = 0; i < 3; i++)
    producer.preRequest(makeContext({ requestId: `t${i}`, headers: { "x-session-id": "s1" } }, clock), {
      primaryProfileName: "d",
      profileResults: new Map([["d", { targetEndpoints: [idle], scored: [] }]]),
    });
  const item = s.flowItem(request(0, { "x-session-id": "s1", "x-llm-d-slo-ttft-ms": "250" }));
  assert.deepEqual(
    [item.bytes, item.inputTokens, item.sessionId, item.turn, item.sloTtftMs, item.enqueuedAt],
    [120, 100, "s1", 3, 250, 1000],
  );
});
