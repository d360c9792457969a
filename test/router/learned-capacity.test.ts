/**
 * `approx-prefix-cache-producer {learnCapacityFromCachedTokens: true}` end to end: a router in front
 * of one `llmd sim` over loopback, the official `openai` client sending prompts round-robin, the
 * producer reading each answer's `usage.prompt_tokens_details.cached_tokens`.
 * - The sim holds 256 tokens of GPU KV (autoTune sizes the index's LRU to that: 4 blocks of 64)
 *   and offloads to CPU: prompts the index has forgotten come back as cache hits from the CPU tier,
 *   so the endpoint's capacity grows beyond its GPU KV.
 * - Without a CPU tier and with an LRU configured far above the engine's KV, the index predicts hits
 *   the engine no longer has: the replica holds less than it was sent, and its capacity shrinks.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { LearningApproxPrefixCacheProducer } from "../../src/scheduler/plugins/approx-prefix-cache-producer/index.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { promptOfTokens } from "../sim/helpers.ts";
import { eventually, MODEL, prefixCacheConfig, routerFor, startSims } from "./harness.ts";

const ENGINE_BLOCK = 16;
const GPU_BLOCKS = 16; // 256 tokens: one prompt below fits, four do not
const PROMPT_TOKENS = 160; // two full index blocks of 64 tokens

interface Stack {
  sim: SimServer;
  router: Router;
  producer: LearningApproxPrefixCacheProducer;
  client: OpenAI;
}

async function stack(simFlags: Record<string, unknown>, producerParameters: string): Promise<Stack> {
  const [sim] = (await startSims(1, {
    "block-size": ENGINE_BLOCK,
    "kv-cache-size": GPU_BLOCKS,
    tokenizer: "char4",
    ...simFlags,
  })) as [SimServer];
  const router = await routerFor(
    [sim.url],
    prefixCacheConfig(`- type: approx-prefix-cache-producer\n  parameters: ${producerParameters}`),
  );
  const producer = router.config.plugins.get(
    "approx-prefix-cache-producer",
  ) as LearningApproxPrefixCacheProducer;
  const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
  return { sim, router, producer, client };
}

/** Sends `rounds` passes over `prompts`; returns the cached tokens each answer reported. */
async function sendRounds(s: Stack, prompts: readonly string[], rounds: number): Promise<number[]> {
  const cached: number[] = [];
  for (let r = 0; r < rounds; r++)
    for (const prompt of prompts) {
      const answer = await s.client.completions.create({ model: MODEL, prompt, max_tokens: 1 });
      cached.push(answer.usage?.prompt_tokens_details?.cached_tokens ?? 0);
    }
  return cached;
}

/** The only endpoint's key, once it has been scraped (autoTune needs its KV size). */
async function scrapedEndpoint(s: Stack): Promise<string> {
  assert.ok(await eventually(() => (s.router.pool.all()[0]?.metrics.cacheNumBlocks ?? 0) > 0));
  return s.router.pool.all()[0]!.metadata.key;
}

describe("the approximate index learns capacity from cached_tokens", () => {
  const stacks: Stack[] = [];
  after(async () => {
    for (const s of stacks) {
      await s.router.close();
      await s.sim.close();
    }
  });

  it("grows an endpoint whose CPU tier serves prompts its GPU-sized LRU forgot", async () => {
    const s = await stack({ "cpu-offload-gb": 1 }, "{learnCapacityFromCachedTokens: true}");
    stacks.push(s);
    const key = await scrapedEndpoint(s);
    const gpuBlocks = (GPU_BLOCKS * ENGINE_BLOCK) / 64;
    const prompts = [0, 1, 2, 3].map((i) => promptOfTokens(PROMPT_TOKENS, `cpu${i}`));
    const cached = await sendRounds(s, prompts, 3);
    assert.deepEqual(cached.slice(0, 4), [0, 0, 0, 0], "the first pass is cold");
    assert.ok(
      cached.slice(4).every((c) => c >= 128),
      `later passes hit the CPU tier: ${cached}`,
    );
    assert.ok(s.producer.feedback.scale(key) > 1, `scale ${s.producer.feedback.scale(key)}`);
    assert.ok(s.producer.index.capacity(key) > gpuBlocks, `capacity ${s.producer.index.capacity(key)}`);
  });

  it("shrinks an endpoint that holds less than it was sent", async () => {
    const s = await stack(
      {},
      "{learnCapacityFromCachedTokens: true, autoTune: false, lruCapacityPerServer: 1000}",
    );
    stacks.push(s);
    const key = await scrapedEndpoint(s);
    const prompts = [0, 1, 2, 3].map((i) => promptOfTokens(PROMPT_TOKENS, `gpu${i}`));
    const cached = await sendRounds(s, prompts, 2);
    assert.deepEqual(cached, [0, 0, 0, 0, 0, 0, 0, 0], "GPU KV holds no earlier prompt by its turn");
    assert.ok(s.producer.feedback.scale(key) < 1, `scale ${s.producer.feedback.scale(key)}`);
    assert.ok(s.producer.index.capacity(key) < 1000, `capacity ${s.producer.index.capacity(key)}`);
  });
});
