/**
 * Identity as every host resolves it: objective → priority, fairness header → agent identity (set
 * by the real `agent-identity` header processor) → `default-flow`, and a tenant map's API keys
 * deciding fairness id, tenant and the priority cap.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createBuiltinRegistry } from "../config/registry.ts";
import { ManualClock } from "../core/clock.ts";
import { TenantMap } from "../flow-control/identity.ts";
import { makeEnv } from "../scheduler/framework/testing.ts";
import type { RequestHeaderProcessor, SchedulingRequest } from "../scheduler/framework/types.ts";
import { RequestIdentity } from "./identity.ts";
import { loadConfig } from "../config/index.ts";
import { makeEndpoint } from "../scheduler/framework/testing.ts";
import { RequestLifecycle } from "./lifecycle.ts";

const definition = createBuiltinRegistry().get("agent-identity")!;
const agentIdentity = definition.create(definition.parameters.parse({}), makeEnv("agent-identity"));
const objectives = new Map([
  ["premium", 100],
  ["batch", -10],
]);
const tenants = new TenantMap([
  { name: "acme", apiKeys: ["key-acme-1234"], objective: "batch", maxPriority: 0 },
]);

function request(headers: Record<string, string>): SchedulingRequest {
  return {
    requestId: "r",
    model: "m",
    path: "/v1/completions",
    headers,
    promptText: "",
    body: {},
    bodyBytes: 0,
    priority: 0,
    fairnessId: "",
    attributes: new Map(),
  };
}

function resolved(headers: Record<string, string>, withTenants = false) {
  const identity = new RequestIdentity({
    objectives,
    plugins: new Map([["agent-identity", agentIdentity]]),
    scheduler: agentIdentity as RequestHeaderProcessor,
    clock: new ManualClock(),
    ...(withTenants ? { tenants } : {}),
  });
  const r = request(headers);
  identity.resolve(r);
  return { priority: r.priority, fairnessId: r.fairnessId, tenant: r.tenant };
}

test("objective gives the priority; the fairness header, then the agent identity, then default-flow", () => {
  assert.deepEqual(
    resolved({ "x-llm-d-inference-objective": "premium", "x-llm-d-inference-fairness-id": "t" }),
    {
      priority: 100,
      fairnessId: "t",
      tenant: undefined,
    },
  );
  assert.equal(resolved({ "x-claude-code-session-id": "s-7" }).fairnessId, "s-7");
  assert.equal(
    resolved({ "x-llm-d-inference-fairness-id": "t", "x-claude-code-session-id": "s-7" }).fairnessId,
    "t",
  );
  assert.deepEqual(resolved({ "x-llm-d-inference-objective": "nope" }), {
    priority: 0,
    fairnessId: "default-flow",
    tenant: undefined,
  });
});

test("on a trusted edge the API key decides tenant, fairness id and the priority cap", () => {
  const acme = { authorization: "Bearer key-acme-1234" };
  assert.deepEqual(resolved(acme, true), { priority: -10, fairnessId: "acme", tenant: "acme" });
  assert.deepEqual(resolved({ ...acme, "x-llm-d-inference-objective": "premium" }, true), {
    priority: 0,
    fairnessId: "acme",
    tenant: "acme",
  });
  const stranger = { "x-llm-d-inference-objective": "premium", "x-llm-d-inference-fairness-id": "me" };
  assert.deepEqual(resolved(stranger, true), { priority: 0, fairnessId: "default-flow", tenant: undefined });
});

test("through the lifecycle a request's header processors run once, before admission", () => {
  const config = loadConfig(
    `apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- type: agent-identity
- type: decode-filter
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - pluginRef: decode-filter
  - pluginRef: max-score-picker
`,
    { allowExperimentalPlugins: true },
  );
  const processor = config.plugins.get("agent-identity") as RequestHeaderProcessor;
  const processRequestHeaders = processor.processRequestHeaders.bind(processor);
  let calls = 0;
  processor.processRequestHeaders = (ctx) => {
    calls++;
    processRequestHeaders(ctx);
  };
  const endpoints = [makeEndpoint("a")];
  const lifecycle = new RequestLifecycle({
    scheduler: config.scheduler,
    objectives,
    flowControlGate: false,
    flowControl: config.flowControl,
    plugins: config.plugins,
    clock: new ManualClock(),
    endpoints: () => endpoints,
  });
  const r = request({ "x-claude-code-session-id": "s-9" });
  assert.equal(lifecycle.arrive(r, endpoints), "pass");
  assert.equal(r.fairnessId, "s-9");
  assert.equal(calls, 1);
  assert.ok(!(lifecycle.place(r, endpoints) instanceof Error));
  assert.equal(calls, 1, "placement does not run them again");
});
