/** A client that goes away mid-request frees its sequence and KV blocks at once (seen in /metrics). */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, metric, promptOfTokens, scrape, startTestSim, waitForMetrics } from "./helpers.ts";

const LONG = { max_tokens: 5000, ignore_eos: true, prompt: promptOfTokens(200, "d"), model: MODEL };
const freed = (s: Map<string, number>) =>
  metric(s, "vllm:num_requests_running") === 0 && metric(s, "vllm:kv_cache_usage_perc") === 0;

describe("client disconnect", () => {
  let sim: SimServer;
  before(async () => {
    sim = await startTestSim({ "inter-token-latency": "5ms", "max-model-len": 8192 });
  });
  after(() => sim.close());

  test("mid-stream abort frees the sequence", async () => {
    const controller = new AbortController();
    const res = await fetch(`${sim.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ ...LONG, stream: true }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.match(new TextDecoder().decode(first.value), /^data: /);
    const busy = await scrape(sim.url);
    assert.equal(metric(busy, "vllm:num_requests_running"), 1);
    assert.ok(metric(busy, "vllm:kv_cache_usage_perc") > 0);
    controller.abort();
    const after = await waitForMetrics(sim.url, freed, 1000);
    assert.equal(metric(after, "vllm:num_requests_running"), 0);
    assert.equal(metric(after, "vllm:kv_cache_usage_perc"), 0);
    assert.equal(after.get('vllm:request_success_total{model_name="sim-model",finish_reason="abort"}'), 1);
  });

  test("abort of a non-streaming request frees the sequence", async () => {
    const controller = new AbortController();
    const pending = fetch(`${sim.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify(LONG),
      signal: controller.signal,
    }).catch((err: Error) => err.name);
    const busy = await waitForMetrics(sim.url, (s) => metric(s, "vllm:num_requests_running") === 1, 1000);
    assert.equal(metric(busy, "vllm:num_requests_running"), 1);
    controller.abort();
    assert.equal(await pending, "AbortError");
    const after = await waitForMetrics(sim.url, freed, 1000);
    assert.equal(metric(after, "vllm:num_requests_running"), 0);
    assert.equal(metric(after, "vllm:kv_cache_usage_perc"), 0);
  });
});
