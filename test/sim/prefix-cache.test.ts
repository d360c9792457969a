/** Prefix caching, LRU eviction and preemption as seen over HTTP (usage and /metrics). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { completion, metric, promptOfTokens, scrape, startTestSim } from "./helpers.ts";

interface CompletionBody {
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    prompt_tokens_details: { cached_tokens: number };
  };
}

const complete = (url: string, body: Record<string, unknown>) => completion<CompletionBody>(url, body);

test("a shared 10,000-token prefix is served from cache with a lower TTFT", async () => {
  // Measured H200 profile timing, 10× faster than real time; latencies are read in engine time.
  const sim = await startTestSim({
    "time-to-first-token": undefined,
    "inter-token-latency": undefined,
    speed: 10,
  });
  try {
    const shared = promptOfTokens(10_000, "s");
    const ttftSum = async () => metric(await scrape(sim.url), "vllm:time_to_first_token_seconds_sum");
    const a = await complete(sim.url, { prompt: shared + promptOfTokens(100, "a"), max_tokens: 1 });
    const ttftA = await ttftSum();
    const b = await complete(sim.url, { prompt: shared + promptOfTokens(100, "b"), max_tokens: 1 });
    const ttftB = (await ttftSum()) - ttftA;
    assert.equal(a.usage.prompt_tokens, 10_100);
    assert.equal(a.usage.prompt_tokens_details.cached_tokens, 0);
    assert.equal(b.usage.prompt_tokens_details.cached_tokens, 10_000); // 625 whole 16-token blocks
    assert.ok(ttftB < ttftA / 3, `cached TTFT ${ttftB}s should be well below ${ttftA}s`);
    // An identical prompt reuses every whole block except the one holding the last prompt token.
    const again = await complete(sim.url, { prompt: shared + promptOfTokens(100, "a"), max_tokens: 1 });
    assert.equal(again.usage.prompt_tokens_details.cached_tokens, Math.floor(10_099 / 16) * 16);
    const samples = await scrape(sim.url);
    assert.equal(metric(samples, "vllm:prefix_cache_hits_total"), 10_000 + 10_096);
    assert.equal(metric(samples, "vllm:prefix_cache_queries_total"), 3 * 10_100);
  } finally {
    await sim.close();
  }
});

test("under KV pressure the least recently used prefix is evicted", async () => {
  const sim = await startTestSim({ "kv-cache-size": 64, "max-model-len": 1024 });
  try {
    const prompts = ["p", "q", "r", "s", "t", "u"].map((tag) => promptOfTokens(320, tag)); // 20 blocks each
    for (const prompt of prompts) await complete(sim.url, { prompt, max_tokens: 1 });
    const samples = await scrape(sim.url);
    assert.ok(metric(samples, "llmd:kv_cache_evictions_total") > 0);
    const newest = await complete(sim.url, { prompt: prompts[5], max_tokens: 1 });
    assert.equal(newest.usage.prompt_tokens_details.cached_tokens, 304);
    const oldest = await complete(sim.url, { prompt: prompts[0], max_tokens: 1 });
    assert.equal(oldest.usage.prompt_tokens_details.cached_tokens, 0);
    assert.equal(metric(await scrape(sim.url), "vllm:kv_cache_usage_perc"), 0);
  } finally {
    await sim.close();
  }
});

test("sequences that outgrow the KV cache are preempted, counted, and still complete", async () => {
  // Slow enough (about 1 s a request) that the four overlap even when the host delays their arrival.
  const sim = await startTestSim({ "kv-cache-size": 64, "max-model-len": 1024, speed: 2 });
  try {
    const requests = ["w", "x", "y", "z"].map((tag) =>
      complete(sim.url, { prompt: promptOfTokens(100, tag), max_tokens: 300, ignore_eos: true }),
    );
    for (const res of await Promise.all(requests)) assert.equal(res.usage.completion_tokens, 300);
    const samples = await scrape(sim.url);
    assert.ok(metric(samples, "vllm:num_preemptions_total") > 0);
    assert.equal(metric(samples, "vllm:num_requests_running"), 0);
    assert.equal(metric(samples, "vllm:generation_tokens_total"), 1200);
  } finally {
    await sim.close();
  }
});
