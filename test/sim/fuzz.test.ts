/**
 * Seeded random and mutated request bodies (some streamed and cut off mid-way) never crash the
 * server, never produce a 5xx, and leave nothing running or holding KV blocks afterwards.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { seededRandom } from "../../src/core/random.ts";
import { MODEL, metric, scrape, startTestSim, waitForMetrics } from "./helpers.ts";

const REQUESTS = 2000;
const WORKERS = 16;
const PATHS = ["/v1/completions", "/v1/chat/completions", "/v1/responses", "/tokenize"];

const TEMPLATES: Record<string, unknown>[] = [
  { model: MODEL, prompt: "hello there, how are you today? ".repeat(8), max_tokens: 20 },
  { model: MODEL, prompt: [1, 2, 3, 4, 5], max_tokens: 5, stream: true },
  {
    model: MODEL,
    messages: [{ role: "user", content: "hi" }],
    stream: true,
    stream_options: { include_usage: true },
  },
  {
    model: MODEL,
    messages: [{ role: "user", content: [{ type: "text", text: "x" }] }],
    stop: ["a"],
    ignore_eos: true,
  },
  {
    model: MODEL,
    instructions: "be brief",
    input: [
      { role: "user", content: [{ type: "input_text", text: "hi" }] },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "ok" },
    ],
    max_output_tokens: 8,
    stream: true,
  },
];

type Random = () => number;

function randomValue(random: Random, depth = 0): unknown {
  const pick = Math.floor(random() * (depth > 2 ? 6 : 8));
  const values = [
    null,
    random() < 0.5,
    Math.floor((random() - 0.3) * 10 ** Math.floor(random() * 12)),
    random() * 100 - 50,
    "x".repeat(Math.floor(random() * 40)),
    MODEL,
  ];
  if (pick < values.length) return values[pick];
  if (pick === 6)
    return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  return {
    role: "user",
    content: randomValue(random, depth + 1),
    [`k${pick}`]: randomValue(random, depth + 1),
  };
}

function mutatedBody(random: Random): string {
  const body = structuredClone(TEMPLATES[Math.floor(random() * TEMPLATES.length)]!);
  const keys = [
    ...Object.keys(body),
    ...["max_completion_tokens", "n", "stream", "stop", "cache_salt", "input", "previous_response_id"],
  ];
  for (let m = Math.floor(random() * 3); m > 0; m--) {
    const key = keys[Math.floor(random() * keys.length)]!;
    if (random() < 0.3) delete body[key];
    else body[key] = randomValue(random);
  }
  const text = JSON.stringify(body);
  const roll = random();
  if (roll < 0.08) return text.slice(0, Math.floor(random() * text.length)); // truncated
  if (roll < 0.12)
    return String.fromCharCode(...Array.from({ length: 20 }, () => Math.floor(random() * 256)));
  return text;
}

async function send(url: string, random: Random): Promise<number> {
  const path = PATHS[Math.floor(random() * PATHS.length)]!;
  const controller = new AbortController();
  const cutOff = random() < 0.1;
  try {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      body: mutatedBody(random),
      signal: controller.signal,
    });
    if (cutOff) controller.abort();
    else await res.arrayBuffer();
    return res.status;
  } catch (err) {
    if (cutOff && (err as Error).name === "AbortError") return 0;
    throw err;
  }
}

test(`${REQUESTS} seeded random bodies never crash the server or leak sequences`, async () => {
  const sim = await startTestSim({ "max-model-len": 128, speed: 100 });
  try {
    const random = seededRandom(20_251_130);
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS) {
        next++;
        const status = await send(sim.url, random);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    for (const status of statuses.keys()) assert.ok(status < 500, `got ${status}: ${[...statuses]}`);
    assert.ok((statuses.get(200) ?? 0) > 100, "some mutated bodies must still be valid");
    assert.ok((statuses.get(400) ?? 0) > 100, "many must be rejected");
    const idle = (s: Map<string, number>) =>
      metric(s, "vllm:num_requests_running") === 0 &&
      metric(s, "vllm:num_requests_waiting") === 0 &&
      metric(s, "vllm:kv_cache_usage_perc") === 0;
    const samples = await waitForMetrics(sim.url, idle, 3000);
    assert.equal(metric(samples, "vllm:num_requests_running"), 0);
    assert.equal(metric(samples, "vllm:num_requests_waiting"), 0);
    assert.equal(metric(samples, "vllm:kv_cache_usage_perc"), 0);
    assert.equal((await fetch(`${sim.url}/health`)).status, 200);
    assert.ok(metric(await scrape(sim.url), "llmd:kv_cache_cached_blocks") > 0);
  } finally {
    await sim.close();
  }
});
