/** Every documented bad-input case gets its status and an OpenAI error body. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, promptOfTokens, startTestSim } from "./helpers.ts";

interface Case {
  name: string;
  path?: string;
  method?: string;
  body?: string | Record<string, unknown>;
  headers?: Record<string, string>;
  status: number;
  code?: string;
  param?: string;
}

const chat = (extra: Record<string, unknown>) => ({
  model: MODEL,
  messages: [{ role: "user", content: "hi" }],
  ...extra,
});

const CASES: Case[] = [
  { name: "malformed JSON", body: '{"model": "sim-model",', status: 400, code: "invalid_request" },
  { name: "JSON that is not an object", body: "[1,2]", status: 400 },
  {
    name: "missing model",
    body: { messages: [{ role: "user", content: "x" }] },
    status: 400,
    param: "model",
  },
  { name: "unknown model", body: chat({ model: "gpt-9" }), status: 404, code: "model_not_found" },
  { name: "negative max_tokens", body: chat({ max_tokens: -1 }), status: 400, param: "max_tokens" },
  { name: "absurd max_tokens", body: chat({ max_tokens: 1e15 }), status: 400, param: "max_tokens" },
  { name: "fractional max_completion_tokens", body: chat({ max_completion_tokens: 2.5 }), status: 400 },
  { name: "max_tokens as a string", body: chat({ max_tokens: "10" }), status: 400, param: "max_tokens" },
  { name: "n other than 1", body: chat({ n: 2 }), status: 400, param: "n" },
  { name: "n of 0", body: chat({ n: 0 }), status: 400, param: "n" },
  { name: "temperature as a string", body: chat({ temperature: "hot" }), status: 400, param: "temperature" },
  { name: "negative temperature", body: chat({ temperature: -1 }), status: 400, param: "temperature" },
  { name: "top_p over 1", body: chat({ top_p: 2 }), status: 400, param: "top_p" },
  { name: "top_k below -1", body: chat({ top_k: -3 }), status: 400, param: "top_k" },
  { name: "min_p over 1", body: chat({ min_p: 1.5 }), status: 400, param: "min_p" },
  {
    name: "presence_penalty over 2",
    body: chat({ presence_penalty: 2.5 }),
    status: 400,
    param: "presence_penalty",
  },
  {
    name: "frequency_penalty below -2",
    body: chat({ frequency_penalty: -3 }),
    status: 400,
    param: "frequency_penalty",
  },
  {
    name: "repetition_penalty of 0",
    body: chat({ repetition_penalty: 0 }),
    status: 400,
    param: "repetition_penalty",
  },
  { name: "max_tokens of -5", body: chat({ max_tokens: -5 }), status: 400, param: "max_tokens" },
  { name: "stop as a number", body: chat({ stop: 3 }), status: 400, param: "stop" },
  { name: "fractional seed", body: chat({ seed: 0.5 }), status: 400, param: "seed" },
  { name: "chat logprobs as a number", body: chat({ logprobs: 2 }), status: 400, param: "logprobs" },
  {
    name: "top_logprobs without logprobs",
    body: chat({ top_logprobs: 2 }),
    status: 400,
    param: "top_logprobs",
  },
  {
    name: "completions logprobs over 20",
    path: "/v1/completions",
    body: { model: MODEL, prompt: "x", logprobs: 21 },
    status: 400,
    param: "logprobs",
  },
  {
    name: "unknown response_format type",
    body: chat({ response_format: { type: "yaml" } }),
    status: 400,
    param: "response_format",
  },
  {
    name: "stream_options.include_usage not a boolean",
    body: chat({ stream: true, stream_options: { include_usage: 1 } }),
    status: 400,
    param: "stream_options",
  },
  {
    name: "an unknown message role",
    body: chat({ messages: [{ role: "wizard" }] }),
    status: 400,
    param: "messages[0].role",
  },
  {
    name: "an unknown content part type",
    body: chat({ messages: [{ role: "user", content: [{ type: "hologram" }] }] }),
    status: 400,
    param: "messages[0].content[0].type",
  },
  {
    name: "stream_options without stream",
    body: chat({ stream_options: { include_usage: true } }),
    status: 400,
  },
  { name: "empty messages", body: chat({ messages: [] }), status: 400, param: "messages" },
  {
    name: "message without role",
    body: chat({ messages: [{ content: "x" }] }),
    status: 400,
    param: "messages[0].role",
  },
  {
    name: "two prompts",
    path: "/v1/completions",
    body: { model: MODEL, prompt: ["a", "b"] },
    status: 400,
    param: "prompt",
  },
  {
    name: "prompt longer than max-model-len",
    path: "/v1/completions",
    body: { model: MODEL, prompt: promptOfTokens(300, "l") },
    status: 400,
    code: "context_length_exceeded",
  },
  {
    name: "prompt plus max_tokens over max-model-len",
    path: "/v1/completions",
    body: { model: MODEL, prompt: promptOfTokens(200, "l"), max_tokens: 100 },
    status: 400,
    code: "context_length_exceeded",
  },
  {
    name: "body over the size limit",
    body: chat({ pad: "x".repeat(5000) }),
    status: 413,
    code: "request_too_large",
  },
  { name: "wrong method", method: "GET", body: undefined, status: 405, code: "method_not_allowed" },
  { name: "wrong path", path: "/v1/nothing", status: 404, code: "not_found" },
  { name: "forced error header", body: chat({}), headers: { "x-return-error": "429" }, status: 429 },
];

describe("bad input", () => {
  let sim: SimServer;
  before(async () => {
    sim = await startTestSim({ "max-model-len": 256, "max-body-bytes": 4096 });
  });
  after(() => sim.close());

  for (const c of CASES) {
    test(c.name, async () => {
      const method = c.method ?? "POST";
      const body = typeof c.body === "string" || c.body === undefined ? c.body : JSON.stringify(c.body);
      const res = await fetch(`${sim.url}${c.path ?? "/v1/chat/completions"}`, {
        method,
        headers: c.headers,
        body: method === "GET" ? undefined : body,
      });
      assert.equal(res.status, c.status);
      assert.match(res.headers.get("content-type") ?? "", /application\/json/);
      const { error } = (await res.json()) as {
        error: { message: string; type: string; code: string; param: unknown };
      };
      assert.equal(typeof error.message, "string");
      assert.ok(error.message.length > 0);
      assert.equal(typeof error.type, "string");
      if (c.code) assert.equal(error.code, c.code);
      if (c.param) assert.equal(error.param, c.param);
      if (c.status === 405) assert.equal(res.headers.get("allow"), "POST");
    });
  }

  test("context-length message follows vLLM's wording", async () => {
    const res = await fetch(`${sim.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ model: MODEL, prompt: promptOfTokens(300, "m") }),
    });
    const { error } = (await res.json()) as { error: { message: string } };
    assert.match(
      error.message,
      /maximum context length is 256 tokens\. However, your request has 300 input tokens/,
    );
  });
});

test("failure injection at 100% returns the configured failure type", async () => {
  const sim = await startTestSim({ "failure-injection-rate": 100, "failure-types": ["server_error"] });
  try {
    const res = await fetch(`${sim.url}/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify(chat({})),
    });
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, "server_error");
  } finally {
    await sim.close();
  }
});
