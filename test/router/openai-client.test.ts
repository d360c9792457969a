import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, metricSum, routerFor, startSims } from "./harness.ts";

describe("openai client through the router to several simulators", () => {
  let sims: SimServer[];
  let router: Router;
  let client: OpenAI;

  before(async () => {
    sims = await startSims(3);
    router = await routerFor(sims.map((s) => s.url));
    client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  it("non-streaming chat returns the completion, usage and the serving endpoint", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: MODEL, messages: [{ role: "user", content: "hello there" }], max_tokens: 5 })
      .withResponse();
    assert.equal(data.object, "chat.completion");
    assert.ok((data.usage?.prompt_tokens ?? 0) > 0);
    const served = response.headers.get("x-llmd-endpoint") ?? "";
    assert.ok(router.pool.get(served), `x-llmd-endpoint ${served} is a pool member`);
  });

  it("streaming chat delivers deltas and the final usage chunk", async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "stream me some words please" }],
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let completionTokens = 0;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
    }
    assert.ok(text.length > 0);
    assert.ok(completionTokens > 0);
  });

  it("completions work streaming and not", async () => {
    const plain = await client.completions.create({ model: MODEL, prompt: "one two three", max_tokens: 4 });
    assert.ok((plain.usage?.completion_tokens ?? 0) > 0);
    const stream = await client.completions.create({
      model: MODEL,
      prompt: "four five",
      max_tokens: 4,
      stream: true,
    });
    let chunks = 0;
    for await (const _ of stream) chunks++;
    assert.ok(chunks > 0);
  });

  it("lists the pool's models", async () => {
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      [MODEL],
    );
  });

  it("exports llm-d request metrics", async () => {
    const text = await (await fetch(`${router.url}/metrics`)).text();
    assert.ok(metricSum(text, "llm_d_epp_request_total") >= 4);
    assert.ok(metricSum(text, "llm_d_epp_request_input_tokens_count") >= 1);
    assert.equal(metricSum(text, "llm_d_epp_ready_endpoints"), 3);
    const perEndpoint = text.match(/^llm_d_epp_per_endpoint_queue_size\{[^}]*endpoint="[^"]+"\} \d+$/gm);
    assert.equal(perEndpoint?.length, 3, "one waiting-queue series per ready endpoint");
    assert.equal(metricSum(text, "llm_d_epp_request_running"), 0);
    assert.match(text, /llm_d_epp_request_ttft_seconds_count\{[^}]*streaming="true"/);
    assert.match(text, /llm_d_epp_plugin_duration_seconds_count\{extension_point="Scorer"/);
  });
});
