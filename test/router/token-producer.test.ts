/**
 * The router's token-producer with a real tokenizer, live: `llmd router` over an `llmd sim` that
 * counts with the same tokenizer. Chats are served through the official `openai` client, and the
 * router's per-message token cache (on /metrics) grows by a turn's new messages only.
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import {
  LLAMA_TOKENIZER_SIM,
  MODEL,
  prefixCacheConfig,
  type RouterProcess,
  type SimProcess,
  spawnRouter,
  spawnSim,
  stopChild,
} from "./harness.ts";

const CONFIG = prefixCacheConfig(`- type: token-producer
  parameters: {tokenizer: llama3.1}
- type: approx-prefix-cache-producer`);

const IGNORE_EOS = { ignore_eos: true } as Record<string, unknown>;

let sim: SimProcess;
let router: RouterProcess;

before(async () => {
  const config = join(mkdtempSync(join(tmpdir(), "llmd-token-producer-")), "config.yaml");
  writeFileSync(config, CONFIG);
  sim = await spawnSim(LLAMA_TOKENIZER_SIM);
  router = await spawnRouter(["--endpoints", sim.url, "--config", config]);
});

after(async () => {
  await stopChild(router.child);
  await stopChild(sim.child);
});

/** The router's `llmd_token_cache_segments` gauge. */
async function cachedSegments(): Promise<number> {
  const text = await (await fetch(`${router.url}/metrics`)).text();
  const line = /^llmd_token_cache_segments\{plugin_name="token-producer"\} (\d+)$/m.exec(text);
  assert.ok(line, "the token cache gauge is exported");
  return Number(line[1]);
}

test("chats are served, and a next turn adds only its new messages to the router's token cache", async () => {
  const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const turn1 = [
    { role: "system" as const, content: "You are terse." },
    { role: "user" as const, content: "Name a prime number, and explain why it is prime. ".repeat(40) },
  ];
  const first = await client.chat.completions.create({
    model: MODEL,
    messages: turn1,
    max_tokens: 8,
    ...IGNORE_EOS,
  });
  assert.equal(first.usage!.completion_tokens, 8);
  assert.equal(await cachedSegments(), 2, "the two messages");
  const turn2 = [
    ...turn1,
    { role: "assistant" as const, content: first.choices[0]!.message.content! },
    { role: "user" as const, content: "Another one?" },
  ];
  const second = await client.chat.completions.create({ model: MODEL, messages: turn2, max_tokens: 8 });
  assert.ok(second.usage!.prompt_tokens > first.usage!.prompt_tokens);
  assert.equal(await cachedSegments(), 4, "only the two new messages were tokenized");
});
