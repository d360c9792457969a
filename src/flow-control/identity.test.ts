import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseObjectives, resolveFlowIdentity, TenantMap } from "./identity.ts";

const OBJECTIVES_YAML = `
apiVersion: llm-d.ai/v1alpha2
kind: InferenceObjective
metadata: {name: premium-traffic}
spec: {priority: 100, poolRef: {name: default-pool}}
---
apiVersion: llm-d.ai/v1alpha2
kind: InferenceObjective
metadata: {name: best-effort-traffic}
spec: {priority: -10, poolRef: {name: default-pool}}
---
apiVersion: llm-d.ai/v1alpha2
kind: InferenceObjective
metadata: {name: unset}
spec: {poolRef: {name: default-pool}}
---
apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
featureGates: [flowControl]
`;

const TENANTS_YAML = `
tenants:
- {name: acme, apiKeys: [sk-acme-0001], maxPriority: 10}
- {name: globex, apiKeys: [sk-globex-01], fairnessId: globex-prod, objective: premium-traffic}
`;

describe("flow identity", () => {
  const objectives = parseObjectives(OBJECTIVES_YAML);

  it("loads InferenceObjective documents and skips other kinds", () => {
    assert.deepEqual(
      [...objectives],
      [
        ["premium-traffic", 100],
        ["best-effort-traffic", -10],
        ["unset", 0],
      ],
    );
    assert.throws(
      () => parseObjectives("kind: InferenceObjective\nmetadata: {name: x}\nspec: {priority: 1.5}"),
      /document 0/,
    );
  });

  const untrusted = [
    { headers: {}, agent: undefined, want: { priority: 0, fairnessId: "default-flow" } },
    { headers: {}, agent: "claude-123", want: { priority: 0, fairnessId: "claude-123" } },
    {
      headers: {
        "x-llm-d-inference-objective": "premium-traffic",
        "x-llm-d-inference-fairness-id": "tenant-a",
      },
      agent: "claude-123",
      want: { priority: 100, fairnessId: "tenant-a" },
    },
    {
      headers: { "x-gateway-inference-objective": "best-effort-traffic" },
      agent: undefined,
      want: { priority: -10, fairnessId: "default-flow" },
    },
    {
      headers: { "x-llm-d-inference-objective": "nope" },
      agent: undefined,
      want: { priority: 0, fairnessId: "default-flow" },
    },
  ];
  for (const [index, { headers, agent, want }] of untrusted.entries()) {
    it(`derives identity from headers (case ${index})`, () => {
      assert.deepEqual(resolveFlowIdentity(headers, { objectives, agentIdentity: agent }), want);
    });
  }

  it("on a trusted edge, the API key decides tenant and caps priority over client headers", () => {
    const tenants = TenantMap.parse(TENANTS_YAML);
    const spoof = {
      "x-llm-d-inference-objective": "premium-traffic",
      "x-llm-d-inference-fairness-id": "someone-else",
    };
    assert.deepEqual(
      resolveFlowIdentity({ ...spoof, authorization: "Bearer sk-acme-0001" }, { objectives, tenants }),
      {
        priority: 10,
        fairnessId: "acme",
        tenant: "acme",
      },
    );
    assert.deepEqual(resolveFlowIdentity({ authorization: "bearer sk-globex-01" }, { objectives, tenants }), {
      priority: 100,
      fairnessId: "globex-prod",
      tenant: "globex",
    });
    assert.deepEqual(
      resolveFlowIdentity({ ...spoof, authorization: "Bearer stolen-key" }, { objectives, tenants }),
      {
        priority: 0,
        fairnessId: "default-flow",
      },
    );
    assert.deepEqual(
      resolveFlowIdentity({ "x-llm-d-inference-objective": "best-effort-traffic" }, { objectives, tenants })
        .priority,
      -10,
    );
  });

  it("rejects malformed tenant files and shared keys", () => {
    assert.throws(() => TenantMap.parse("tenants: [{name: a, apiKeys: []}]"), /tenants\.0\.apiKeys/);
    assert.throws(
      () => TenantMap.parse("tenants: [{name: a, apiKeys: [k1234567]}, {name: b, apiKeys: [k1234567]}]"),
      /already used/,
    );
    assert.throws(
      () => TenantMap.parse("tenants: [{name: a, apiKeys: [k1234567], role: admin}]"),
      /tenant file/,
    );
  });
});
