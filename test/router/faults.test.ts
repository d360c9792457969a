import assert from "node:assert/strict";
import { once } from "node:events";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { InFlightLoadProducer } from "../../src/scheduler/plugins/inflight-load-producer/index.ts";
import { eventually, MODEL, metricSum, routerFor, type SimProcess, spawnSim } from "./harness.ts";

const LONG = { max_tokens: 1500, ignore_eos: true } as const;

describe("an endpoint killed mid-run", () => {
  let sims: SimProcess[];
  let router: Router;
  let client: OpenAI;
  const warnings: string[] = [];

  before(async () => {
    sims = await Promise.all(
      [0, 1, 2].map(() =>
        spawnSim(["--mode", "echo", "--time-to-first-token", "5ms", "--inter-token-latency", "2ms"]),
      ),
    );
    router = await routerFor(
      sims.map((s) => s.url),
      undefined,
      {
        log: (level, message) => {
          if (level === "warn") warnings.push(message);
        },
      },
    );
    client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(async () => {
    await router.close();
    for (const s of sims) s.child.kill("SIGKILL");
  });

  it("errors its in-flight requests, sends new ones elsewhere and leaves no in-flight count behind", async () => {
    const streams = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const { data, response } = await client.completions
          .create({ model: MODEL, prompt: "stream", stream: true, ...LONG })
          .withResponse();
        const iterator = data[Symbol.asyncIterator]();
        await iterator.next();
        return { endpoint: response.headers.get("x-llmd-endpoint") ?? "", iterator };
      }),
    );
    const plain = Array.from({ length: 6 }, (_, i) =>
      fetch(`${router.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, prompt: `plain ${i}`, ...LONG }),
      }),
    );
    assert.ok(await eventually(() => router.gateway.inflight.total() === 12), "all 12 requests dispatched");

    const victim = router.pool.all().find((e) => streams.some((s) => s.endpoint === e.metadata.key));
    assert.ok(victim);
    const victimKey = victim.metadata.key;
    const victimStreams = streams.filter((s) => s.endpoint === victimKey).length;
    const victimPlain = router.gateway.inflight.of(victimKey) - victimStreams;
    assert.ok(victimStreams > 0 && victimPlain > 0, "the victim holds streaming and plain requests");
    const proc = sims.find((s) => s.url.endsWith(`:${victim.metadata.port}`));
    assert.ok(proc);
    proc.child.kill("SIGKILL");
    await once(proc.child, "exit");

    const streamResults = await Promise.all(
      streams.map(async (s) => {
        try {
          for (let r = await s.iterator.next(); !r.done; r = await s.iterator.next());
          return { endpoint: s.endpoint, ok: true };
        } catch {
          return { endpoint: s.endpoint, ok: false };
        }
      }),
    );
    for (const r of streamResults) assert.equal(r.ok, r.endpoint !== victimKey, JSON.stringify(r));
    const statuses = await Promise.all(plain.map(async (p) => (await p).status));
    assert.equal(statuses.filter((s) => s === 502).length, victimPlain, `statuses ${statuses}`);
    assert.equal(statuses.filter((s) => s === 200).length, 6 - victimPlain);
    const failures = warnings.filter((w) => w.includes(`endpoint ${victimKey} failed`));
    assert.equal(failures.length, victimStreams + victimPlain, `one warning per failed request: ${warnings}`);

    for (let i = 0; i < 4; i++) {
      const { response } = await client.completions
        .create({ model: MODEL, prompt: `after ${i}`, max_tokens: 2 })
        .withResponse();
      assert.notEqual(response.headers.get("x-llmd-endpoint"), victimKey);
    }

    assert.equal(router.gateway.inflight.total(), 0);
    const producer = router.config.plugins.get("inflight-load-producer") as InFlightLoadProducer;
    assert.deepEqual(producer.totals(), { requests: 0, tokens: 0, openRequests: 0 });
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    assert.equal(metricSum(metrics, "llm_d_epp_request_running"), 0);
    assert.equal(metricSum(metrics, "llmd_inflight_requests"), 0);
    assert.ok(metricSum(metrics, "llm_d_epp_request_error_total") >= victimPlain);
  });
});
