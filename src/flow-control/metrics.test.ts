import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { FlowControlMetrics } from "./metrics.ts";
import { item, testController } from "./test-helpers.ts";

/** The value of one sample line `name{labels} value` in a registry's text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const body = line.slice(name.length + 1, line.lastIndexOf("}"));
    const have = body.split(",");
    if (want.length === have.length && want.every((pair) => have.includes(pair))) {
      return Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return undefined;
}

function setup(maxFairnessIds?: number) {
  const registry = new Registry();
  const metrics = new FlowControlMetrics({ registry, poolName: "pool-1", maxFairnessIds });
  const { controller } = testController({ defaultRequestTTL: "1s" }, [], metrics);
  metrics.bind(controller);
  return { registry, metrics, controller };
}

const P = "llm_d_epp_flow_control_";

describe("flow-control metrics", () => {
  it("exports queue size and bytes per priority and fairness id, and keeps emptied flows at 0", async () => {
    const { registry, controller } = setup();
    controller.enqueue(item("a1", 0, { fairnessId: "acme", bytes: 300 }));
    controller.enqueue(item("a2", 0, { fairnessId: "acme", bytes: 200 }));
    controller.enqueue(item("g1", 0, { fairnessId: "globex", priority: 5, bytes: 50 }));
    let text = await registry.metrics();
    const acme = { inference_pool: "pool-1", priority: "0", fairness_id: "acme" };
    const globex = { inference_pool: "pool-1", priority: "5", fairness_id: "globex" };
    assert.equal(sample(text, `${P}queue_size`, acme), 2);
    assert.equal(sample(text, `${P}queue_bytes`, acme), 500);
    assert.equal(sample(text, `${P}queue_size`, globex), 1);
    controller.nextDispatch(10, 0);
    text = await registry.metrics();
    assert.equal(sample(text, `${P}queue_size`, globex), 0);
    assert.equal(sample(text, `${P}queue_bytes`, globex), 0);
  });

  it("caps fairness-id label values and folds the rest into `other`", async () => {
    const { registry, controller } = setup(2);
    for (const tenant of ["t1", "t2", "t3", "t4"])
      controller.enqueue(item(tenant, 0, { fairnessId: tenant }));
    const text = await registry.metrics();
    const labels = (fairness_id: string) => ({ inference_pool: "pool-1", priority: "0", fairness_id });
    assert.equal(sample(text, `${P}queue_size`, labels("t1")), 1);
    assert.equal(sample(text, `${P}queue_size`, labels("t2")), 1);
    assert.equal(sample(text, `${P}queue_size`, labels("other")), 2);
    assert.equal(sample(text, `${P}queue_size`, labels("t3")), undefined);
  });

  it("counts outcomes, records queue time and exports saturation and dispatch cycles", async () => {
    const { registry, metrics, controller } = setup();
    controller.enqueue(item("a", 0));
    controller.enqueue(item("b", 0));
    controller.nextDispatch(250, 0.4);
    controller.tick(1000);
    metrics.dispatchCycle(0.00002);
    const text = await registry.metrics();
    const base = { inference_pool: "pool-1", priority: "0", fairness_id: "default-flow" };
    assert.equal(sample(text, `${P}requests_total`, { ...base, outcome: "dispatched" }), 1);
    assert.equal(sample(text, `${P}requests_total`, { ...base, outcome: "rejected-ttl-expired" }), 1);
    const dispatched = { ...base, outcome: "dispatched" };
    assert.equal(sample(text, `${P}request_queue_duration_seconds_sum`, dispatched), 0.25);
    assert.equal(sample(text, `${P}request_queue_duration_seconds_count`, dispatched), 1);
    assert.equal(sample(text, `${P}pool_saturation`, { inference_pool: "pool-1" }), 0.4);
    assert.equal(sample(text, `${P}dispatch_cycle_duration_seconds_count`, { inference_pool: "pool-1" }), 1);
  });
});
