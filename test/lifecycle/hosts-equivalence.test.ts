/**
 * One request lifecycle, two hosts: the same request sequence sent through the gateway (real HTTP
 * to simulators on loopback, wall clock) and through the fleet simulator (in-process engines,
 * virtual clock) gets the same admission outcomes, the same picks and the same flow-control
 * metrics. The config exercises identity (objectives, a tenant map, agent sessions), the
 * probabilistic admitter, flow control with a concurrency detector and a capped sheddable band,
 * and prefix- and load-aware scoring. Every dispatched request runs long enough that nothing
 * completes before the last arrival, so both hosts see the same state at every decision.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Registry } from "prom-client";
import { type Dispatcher, request } from "undici";
import { loadConfig } from "../../src/config/index.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { createEngine } from "../../src/engine/index.ts";
import { runFleet } from "../../src/fleet/simulator.ts";
import { TenantMap } from "../../src/flow-control/identity.ts";
import type { Router } from "../../src/gateway/router.ts";
import { RequestLifecycle } from "../../src/lifecycle/lifecycle.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { type ClientIdentity, completionBody, requestHeaders } from "../../src/workload/client-wire.ts";
import { SyntheticPromptBuilder } from "../../src/workload/synthetic-prompt.ts";
import { type Arrival, blockSegments, makeRequest, type Workload } from "../../src/workload/types.ts";
import { eventually, MODEL, metricSum, routerFor, startSims } from "../router/harness.ts";

const CONFIG = `
apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
featureGates: [flowControl]
plugins:
# Reads scraped load, which the two hosts sample at different instants: thresholds keep it
# admitting here (test/fleet/flow-control.test.ts shows it shedding in the fleet).
- type: probabilistic-admitter
  parameters: {queueDepthThreshold: 1000}
- type: concurrency-detector
  name: limit
  parameters: {maxConcurrency: 2, concurrencyMode: requests}
- type: prefix-cache-scorer
- type: active-request-scorer
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - {pluginRef: prefix-cache-scorer, weight: 2}
  - {pluginRef: active-request-scorer, weight: 1}
  - {pluginRef: max-score-picker}
flowControl:
  saturationDetector: {pluginRef: limit}
  defaultRequestTTL: 600s
  priorityBands:
  - {priority: -1, maxRequests: 2}
`;
const REPLICAS = 3;
const OBJECTIVES = new Map([
  ["chat", 10],
  ["batch", -1],
]);
const TENANTS = [
  { name: "chat", apiKeys: ["chat-key-0001"] },
  { name: "batch", apiKeys: ["batch-key-0001"], maxPriority: -1 },
];
const CLIENTS: ClientIdentity = { apiKeys: new Map(TENANTS.map((t) => [t.name, t.apiKeys[0]!])) };
/** Long enough that no dispatched request finishes during the test, on either host. */
const OUTPUT_TOKENS = 3000;

/** 14 requests: chat and agent sessions sharing prefixes, untenanted and sheddable batch traffic. */
function arrivals(): Arrival[] {
  const plan: [string, string | undefined, number][] = [
    ["s1", "chat", 0],
    ["s2", "chat", 1],
    ["s1", "chat", 0],
    ["a1", undefined, 2],
    ["b1", "batch", 3],
    ["s2", "chat", 1],
    ["a1", undefined, 2],
    ["b2", "batch", 4],
    ["b3", "batch", 5],
    ["b4", "batch", 6],
    ["s3", "chat", 7],
    ["a2", "agents", 8],
    ["s1", "chat", 0],
    ["b5", "batch", 9],
  ];
  return plan.map(([session, objective, prefix], i) => {
    const segments = [...blockSegments(`p${prefix}`, 0, 64, 16), ...blockSegments(`own${i}`, 0, 16, 16)];
    const extra = { sessionId: session, ...(objective ? { objective } : {}) };
    return { atMs: i, request: makeRequest(`r${i}`, segments, OUTPUT_TOKENS, extra) };
  });
}

/** What happened to each request: the endpoint index it runs on, or the dropped reason. */
type Outcomes = Record<string, number | string>;

/** `llm_d_epp_flow_control_requests_total` and queue-duration counts, by their labels. */
function flowCounters(text: string): string[] {
  return text
    .split("\n")
    .filter((l) => /^llm_d_epp_flow_control_(requests_total|request_queue_duration_seconds_count)\{/.test(l))
    .sort();
}

function listWorkload(list: readonly Arrival[]): Workload {
  let next = 0;
  return { name: "list", nextArrival: () => list[next++], onComplete: () => [] };
}

async function throughFleet(): Promise<{ outcomes: Outcomes; counters: string[] }> {
  const clock = new ManualClock();
  const router = loadConfig(CONFIG, { clock, allowExperimentalPlugins: true });
  const registry = new Registry();
  const result = await runFleet({
    replicas: REPLICAS,
    createEngine: () => createEngine({ profile: "h200-llama3-8b" }),
    createLifecycle: (endpoints) =>
      new RequestLifecycle({
        scheduler: router.scheduler,
        objectives: OBJECTIVES,
        tenants: new TenantMap(TENANTS),
        flowControlGate: true,
        flowControl: router.flowControl,
        plugins: router.plugins,
        clock,
        endpoints,
        registry,
      }),
    clients: CLIENTS,
    clock,
    workload: listWorkload(arrivals()),
    prompts: new SyntheticPromptBuilder(),
    model: MODEL,
    durationMs: 1000,
    drainMs: 0,
    scrapeIntervalMs: 50,
    blockTokens: 16,
    loadBucketMs: 1000,
  });
  const outcomes: Outcomes = {};
  for (const r of result.records) outcomes[r.id] = r.outcome === "unfinished" ? r.endpoint : r.outcome!;
  return { outcomes, counters: flowCounters(await registry.metrics()) };
}

describe("the gateway and the fleet simulator host the same lifecycle", () => {
  let sims: SimServer[];
  let router: Router;
  let routerClosed = false;

  before(async () => {
    sims = await startSims(REPLICAS, { "inter-token-latency": "20ms", "max-model-len": 32768 });
    router = await routerFor(
      sims.map((s) => s.url),
      CONFIG,
      { allowExperimentalPlugins: true, objectives: OBJECTIVES, tenants: new TenantMap(TENANTS) },
    );
  });

  after(async () => {
    if (!routerClosed) await router.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  async function throughGateway(): Promise<{ outcomes: Outcomes; counters: string[] }> {
    const prompts = new SyntheticPromptBuilder();
    const keys = sims.map((s) => `default/${new URL(s.url).host}`);
    const outcomes: Outcomes = {};
    const bodies: Dispatcher.ResponseData["body"][] = [];
    let queued = 0;
    for (const { request: r } of arrivals()) {
      const answer = request(`${router.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-request-id": r.id, ...requestHeaders(r, CLIENTS) },
        body: JSON.stringify(completionBody(MODEL, prompts.text(r.segments), r.outputTokens)),
      }).then((res) => {
        // The router cuts the streams at close; their end is not what this test reads.
        res.body.on("error", () => {});
        bodies.push(res.body);
        const reason = res.headers["x-llm-d-request-dropped-reason"];
        outcomes[r.id] =
          res.statusCode === 200 ? keys.indexOf(String(res.headers["x-llmd-endpoint"])) : String(reason);
      });
      const queuedBefore = queued;
      // Decided: answered (dispatched or rejected), or waiting in a flow-control queue.
      const decided = await eventually(async () => {
        if (outcomes[r.id] !== undefined) return true;
        const text = await (await fetch(`${router.url}/metrics`)).text();
        queued = metricSum(text, "llm_d_epp_flow_control_queue_size");
        return queued > queuedBefore;
      });
      assert.ok(decided, `request ${r.id} was neither answered nor queued`);
      void answer;
    }
    await router.close();
    routerClosed = true;
    await eventually(() => Object.keys(outcomes).length === arrivals().length);
    for (const body of bodies) body.destroy();
    return { outcomes, counters: flowCounters(await router.gateway.metrics.registry.metrics()) };
  }

  it("same admission outcomes, same picks, same flow-control counters", async () => {
    const fleet = await throughFleet();
    const gateway = await throughGateway();
    assert.deepEqual(gateway.outcomes, fleet.outcomes);
    assert.deepEqual(gateway.counters, fleet.counters);
    // The sequence exercises every path: placements on every replica, queueing, a full band, shutdown.
    const values = Object.values(fleet.outcomes);
    for (let i = 0; i < REPLICAS; i++) assert.ok(values.includes(i), `no request placed on replica ${i}`);
    assert.ok(values.includes("rejected-saturated"));
    assert.ok(values.includes("rejected-shutting-down"));
  });
});
