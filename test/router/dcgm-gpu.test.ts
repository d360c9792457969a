/**
 * llm-d's GPU sample config (sim-epp-gpu-config.yaml, read in place and unchanged) in a running
 * router over three `llmd sim --dcgm-port 9400` servers, each on its own loopback address as pods
 * with a DCGM exporter sidecar: `dcgm-data-source` polls each exporter every second, `dcgm-extractor`
 * publishes `GPUUtilization`, and while one server's GPU is saturated by a long generation the
 * `endpoint-attribute-filter` (≤ 0.90) keeps every request off it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import { parseEndpointList } from "../../src/endpoints/sources/static-source.ts";
import { type Router, startRouter } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { eventually, MODEL, startSims } from "./harness.ts";

const CONFIG = join(import.meta.dirname, "../../../shared/data/llm-d-configs/sim-epp-gpu-config.yaml");
/** One address per simulated pod, so each has its exporter on the config's port 9400. */
const ADDRESSES = ["127.0.0.2", "127.0.0.3", "127.0.0.4"];
const ATTRIBUTE = "dcgm-extractor/GPUUtilization";

let sims: SimServer[];
let router: Router;
let client: OpenAI;

before(async () => {
  sims = (
    await Promise.all(
      ADDRESSES.map((host) => startSims(1, { host, "dcgm-port": 9400, "inter-token-latency": "10ms" })),
    )
  ).flat();
  router = await startRouter({
    config: { path: CONFIG },
    allowExperimentalPlugins: true,
    endpoints: parseEndpointList(sims.map((s) => s.url.replace("http://", "")).join(",")),
    port: 0,
    scrapeIntervalMs: 20,
    log: () => {},
  });
  client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
});

after(async () => {
  await router.close();
  await Promise.all(sims.map((s) => s.close()));
});

const utilization = (i: number) => {
  const endpoint = router.pool.all().find((e) => e.metadata.address === ADDRESSES[i]);
  return endpoint?.attributes.get(ATTRIBUTE) as number | undefined;
};

test("a saturated GPU is filtered out; the others serve", async () => {
  assert.ok(await eventually(() => [0, 1, 2].every((i) => utilization(i) === 0), 5000), "idle GPUs read 0");
  // 300 tokens at 10 ms each keep the first server's GPU busy for 3 s.
  const long = fetch(`${sims[0]!.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, prompt: "a long story", max_tokens: 300, ignore_eos: true }),
  });
  assert.ok(await eventually(() => (utilization(0) ?? 0) > 0.9, 5000), `busy GPU: ${utilization(0)}`);

  const served = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const { response } = await client.completions
      .create({ model: MODEL, prompt: `short ${i}`, max_tokens: 2 })
      .withResponse();
    served.add(response.headers.get("x-llmd-endpoint") ?? "");
  }
  const busy = router.pool.all().find((e) => e.metadata.address === ADDRESSES[0])!.metadata.key;
  assert.ok(!served.has(busy), `nothing went to the saturated ${busy}: ${[...served]}`);
  assert.ok(served.size >= 1);
  assert.ok((utilization(1) ?? 1) <= 0.9 && (utilization(2) ?? 1) <= 0.9, "the others stay under 0.90");
  assert.equal((await long).status, 200);
});
