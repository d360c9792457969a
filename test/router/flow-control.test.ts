/**
 * Flow control in the live router (`featureGates: [flowControl]`): a concurrency detector with one
 * slot per endpoint makes saturation exact, and one slow simulator keeps requests queued long
 * enough to observe priority order, capacity, TTL expiry, cancellation, eviction and shutdown.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import { TenantMap } from "../../src/flow-control/identity.ts";
import type { Router, RouterOptions } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { eventually, MODEL, metricSum, routerFor, startSims } from "./harness.ts";

const OBJECTIVES = new Map([
  ["chat", 100],
  ["agents", 0],
  ["batch", -10],
]);

function flowConfig(extra = ""): string {
  return `apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
featureGates: [flowControl]
plugins:
- type: queue-scorer
- type: concurrency-detector
  parameters: {maxConcurrency: 1, concurrencyMode: requests}
flowControl:
  saturationDetector: {pluginRef: concurrency-detector}
  defaultRequestTTL: 10s
  priorityBands:
  - {priority: 100}
  - {priority: 0, defaultRequestTTL: 150ms}
  - {priority: -10, maxRequests: 1}
${extra}`;
}

interface Answer {
  status: number;
  reason: string | null;
  retryAfter: string | null;
  /** ms since the test's start when the answer arrived. */
  at: number;
  text: string;
}

let started = performance.now();
const sims: SimServer[] = [];
const routers: Router[] = [];

async function boot(
  config: string,
  options: Partial<RouterOptions> = {},
  ttft = "80ms",
  itl = "1ms",
): Promise<Router> {
  const [sim] = await startSims(1, { "time-to-first-token": ttft, "inter-token-latency": itl });
  sims.push(sim as SimServer);
  const router = await routerFor([sim?.url ?? ""], config, { objectives: OBJECTIVES, ...options });
  routers.push(router);
  started = performance.now();
  return router;
}

async function post(
  router: Router,
  objective: string,
  init: { headers?: Record<string, string>; signal?: AbortSignal; stream?: boolean; maxTokens?: number } = {},
): Promise<Answer> {
  const res = await fetch(`${router.url}/v1/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-llm-d-inference-objective": objective,
      ...init.headers,
    },
    body: JSON.stringify({
      model: MODEL,
      prompt: `${objective} request`,
      max_tokens: init.maxTokens ?? 1,
      ignore_eos: (init.maxTokens ?? 1) > 1,
      stream: init.stream,
    }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const text = await res.text();
  return {
    status: res.status,
    reason: res.headers.get("x-llm-d-request-dropped-reason"),
    retryAfter: res.headers.get("retry-after"),
    at: performance.now() - started,
    text,
  };
}

async function metrics(router: Router): Promise<string> {
  return (await fetch(`${router.url}/metrics`)).text();
}

async function queuedCount(router: Router): Promise<number> {
  return metricSum(await metrics(router), "llm_d_epp_flow_control_queue_size");
}

/** Waits until `n` requests are queued (the blocker holds the only slot). */
async function untilQueued(router: Router, n: number): Promise<void> {
  assert.ok(await eventually(async () => (await queuedCount(router)) === n), `expected ${n} queued`);
}

afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close()));
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

describe("router flow control", () => {
  it("serves queued high-priority requests before queued lower ones", async () => {
    const router = await boot(
      flowConfig().replace("{priority: 0, defaultRequestTTL: 150ms}", "{priority: 0}"),
      {},
      "50ms",
      "5ms",
    );
    // The blocker decodes 400 tokens (~2 s) so the slot stays taken while the queue fills, even on a
    // loaded machine; the queued requests are one token each.
    const blocker = post(router, "chat", { maxTokens: 400 });
    await eventually(
      async () => metricSum(await metrics(router), "llm_d_epp_flow_control_requests_total") >= 1,
    );
    const low = [0, 1, 2].map(() => post(router, "agents"));
    await untilQueued(router, 3);
    const high = [0, 1, 2].map(() => post(router, "chat"));
    await untilQueued(router, 6);
    const [lows, highs] = await Promise.all([Promise.all(low), Promise.all(high), blocker]);
    for (const answer of [...lows, ...highs]) assert.equal(answer.status, 200, answer.text);
    const lastHigh = Math.max(...highs.map((a) => a.at));
    const firstLow = Math.min(...lows.map((a) => a.at));
    assert.ok(lastHigh < firstLow, `high done at ${lastHigh} ms, first low at ${firstLow} ms`);
  });

  it("answers a sheddable request over its band's capacity with 429 at once, with Retry-After", async () => {
    const router = await boot(flowConfig());
    const blocker = post(router, "chat");
    const queued = post(router, "batch");
    await untilQueued(router, 1);
    const t0 = performance.now() - started;
    const shed = await post(router, "batch");
    assert.equal(shed.status, 429);
    assert.equal(shed.reason, "rejected-saturated");
    assert.equal(shed.retryAfter, "1");
    assert.ok(shed.at - t0 < 60, `answered after ${shed.at - t0} ms`);
    assert.equal((await queued).status, 200);
    assert.equal((await blocker).status, 200);
  });

  it("expires a request whose queue-wait budget runs out: 429 rejected-ttl-expired", async () => {
    const router = await boot(flowConfig(), {}, "400ms");
    const blocker = post(router, "chat");
    const expired = await post(router, "agents");
    assert.equal(expired.status, 429);
    assert.equal(expired.reason, "rejected-ttl-expired");
    assert.ok(expired.at < 380, `expired at ${expired.at} ms, before the blocker ended`);
    assert.equal((await blocker).status, 200);
  });

  it("frees everything when a queued client leaves", async () => {
    const router = await boot(flowConfig(), {}, "1s");
    const blocker = post(router, "chat");
    const client = new AbortController();
    const leaving = post(router, "chat", { signal: client.signal }).catch((err: Error) => err);
    await untilQueued(router, 1);
    client.abort();
    assert.ok((await leaving) instanceof Error);
    await untilQueued(router, 0);
    assert.equal((await blocker).status, 200);
    assert.equal((await post(router, "chat")).status, 200);
    const text = await metrics(router);
    assert.match(
      text,
      /llm_d_epp_flow_control_requests_total\{[^}]*outcome="rejected-context-cancelled"[^}]*\} 1/,
    );
    assert.equal(router.gateway.inflight.total(), 0);
  });

  it("answers queued requests 503 rejected-shutting-down when the router closes", async () => {
    const router = await boot(flowConfig(), {}, "300ms");
    const blocker = post(router, "chat").catch((err: Error) => err);
    const queued = post(router, "chat");
    await untilQueued(router, 1);
    await router.close();
    routers.length = 0;
    const answer = await queued;
    assert.equal(answer.status, 503);
    assert.equal(answer.reason, "rejected-shutting-down");
    await blocker;
  });

  it("on drain, answers queued requests 503 rejected-shutting-down at once and lets the running one finish", async () => {
    const router = await boot(flowConfig(), {}, "300ms");
    const blocker = post(router, "chat", { maxTokens: 50 });
    await eventually(async () => router.gateway.inflight.total() === 1);
    const queued = post(router, "chat");
    await untilQueued(router, 1);
    const drained = router.drain(30_000);
    const answer = await queued;
    assert.deepEqual([answer.status, answer.reason], [503, "rejected-shutting-down"]);
    assert.equal((await blocker).status, 200, "the dispatched request is served");
    assert.deepEqual(await drained, { cutOff: 0 });
    routers.length = 0;
  });

  it("evicts an in-flight sheddable request for a blocked higher band: 429 evicted", async () => {
    const router = await boot(flowConfig("  enableEviction: true"), {}, "500ms");
    const batch = post(router, "batch");
    await eventually(async () => router.gateway.inflight.total() === 1);
    const chat = post(router, "chat");
    const evicted = await batch;
    assert.equal(evicted.status, 429);
    assert.equal(evicted.reason, "evicted");
    assert.equal((await chat).status, 200);
  });

  it("answers every request of a mixed burst with 200 or an explicit reason", async () => {
    const router = await boot(flowConfig(), {}, "10ms");
    const objectives = ["chat", "agents", "batch"];
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => post(router, objectives[i % 3] as string)),
    );
    const explained = answers.filter((a) => a.status === 200 || (a.status >= 400 && a.reason));
    assert.equal(explained.length, answers.length);
    assert.ok(answers.filter((a) => a.status === 200).length >= 14, "every chat request is served");
    await untilQueued(router, 0);
    assert.equal(router.gateway.inflight.total(), 0);
  });

  it("lets a tenant's API key override a client-asserted objective", async () => {
    const tenants = TenantMap.parse(
      "tenants:\n- {name: nightly, apiKeys: [sk-nightly-0001], maxPriority: -10}\n",
    );
    const router = await boot(flowConfig(), { tenants });
    const answer = await post(router, "chat", { headers: { authorization: "Bearer sk-nightly-0001" } });
    assert.equal(answer.status, 200);
    const text = await metrics(router);
    assert.match(
      text,
      /llm_d_epp_flow_control_requests_total\{[^}]*priority="-10"[^}]*fairness_id="nightly"[^}]*outcome="dispatched"[^}]*\} 1/,
    );
    assert.doesNotMatch(text, /requests_total\{[^}]*priority="100"/);
  });
});

describe("router legacy admission (no flowControl gate)", () => {
  it("sheds a sheddable request with 429 at once while saturated, and serves the others", async () => {
    const legacy = flowConfig().replace("featureGates: [flowControl]\n", "");
    const router = await boot(legacy, {}, "300ms");
    const blocker = post(router, "chat");
    await eventually(async () => router.gateway.inflight.total() === 1);
    const shed = await post(router, "batch");
    assert.equal(shed.status, 429);
    assert.equal(shed.reason, "rejected-saturated");
    assert.equal(shed.retryAfter, "1");
    assert.ok(shed.at < 250, `answered at ${shed.at} ms, before the blocker ended`);
    const [chat, agents] = await Promise.all([post(router, "chat"), post(router, "agents"), blocker]);
    assert.equal(chat.status, 200);
    assert.equal(agents.status, 200);
    assert.doesNotMatch(await metrics(router), /llm_d_epp_flow_control_requests_total\{/);
  });
});
