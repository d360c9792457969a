/**
 * The router's graceful drain (`Router.drain`, what SIGTERM runs): readiness 503 at once while
 * liveness stays 200, new requests 503 `rejected-shutting-down`, accepted requests and streams
 * finish; past the drain timeout what still runs is answered `shutting_down`.
 */
import assert from "node:assert/strict";
import { afterEach, describe, it } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { eventually, MODEL, metricSum, restOfStream, routerFor, startSims } from "./harness.ts";

let sims: SimServer[] = [];
let router: Router | undefined;

afterEach(async () => {
  await router?.close();
  await Promise.all(sims.map((s) => s.close()));
});

async function boot(): Promise<{ router: Router; client: OpenAI }> {
  sims = await startSims(2, { "inter-token-latency": "3ms" });
  router = await routerFor(sims.map((s) => s.url));
  return { router, client: new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 }) };
}

/** A streamed chat of `tokens` tokens whose first chunk has arrived (so it is in flight). */
async function startedStream(client: OpenAI, tokens: number) {
  const stream = await client.chat.completions.create({
    model: MODEL,
    messages: [{ role: "user", content: "stream through the drain" }],
    max_tokens: tokens,
    stream: true,
    stream_options: { include_usage: true },
    ignore_eos: true,
  } as OpenAI.ChatCompletionCreateParamsStreaming);
  const iterator = stream[Symbol.asyncIterator]();
  const first = await iterator.next();
  assert.equal(first.done, false);
  return iterator;
}

function postCompletion(router: Router, tokens: number): Promise<Response> {
  return fetch(`${router.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, prompt: "plain", max_tokens: tokens, ignore_eos: true }),
  });
}

describe("router drain", () => {
  it("turns not-ready at once, refuses new requests with 503 rejected-shutting-down, finishes accepted ones, then closes", async () => {
    const { router, client } = await boot();
    const stream = await startedStream(client, 150);
    const plain = postCompletion(router, 150);
    assert.ok(await eventually(() => router.gateway.inflight.total() === 2), "both requests dispatched");

    const drained = router.drain(30_000);
    assert.equal(router.gateway.draining, true);
    const ready = await fetch(`${router.url}/ready`);
    assert.equal(ready.status, 503);
    assert.equal(((await ready.json()) as { status: string }).status, "shutting down");
    assert.equal((await fetch(`${router.url}/health`)).status, 200, "liveness stays 200");

    const refused = await postCompletion(router, 1);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("x-llm-d-request-dropped-reason"), "rejected-shutting-down");
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.equal(refused.headers.get("connection"), "close");
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "shutting_down");
    await assert.rejects(
      client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "late" }] }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 503 && err.code === "shutting_down",
    );

    assert.equal(await restOfStream(stream), 150, "the in-flight stream ran to its end");
    const answer = await plain;
    assert.equal(answer.status, 200);
    assert.equal(
      ((await answer.json()) as { usage: { completion_tokens: number } }).usage.completion_tokens,
      150,
    );
    assert.deepEqual(await drained, { cutOff: 0 });
    await assert.rejects(fetch(`${router.url}/health`), "the router closed after the drain");
  });

  it("answers what outlives the drain timeout with shutting_down: an SSE error event, or a 503 body", async () => {
    const { router, client } = await boot();
    const stream = await startedStream(client, 5000);
    const plain = postCompletion(router, 5000);
    assert.ok(await eventually(() => router.gateway.inflight.total() === 2), "both requests dispatched");

    assert.deepEqual(await router.drain(200), { cutOff: 2 });
    const ended = await restOfStream(stream);
    assert.ok(ended instanceof OpenAI.APIError, `the stream ends with an error event, got ${ended}`);
    assert.equal(ended.code, "shutting_down");
    const answer = await plain;
    assert.equal(answer.status, 503);
    assert.equal(answer.headers.get("x-llm-d-request-dropped-reason"), "rejected-shutting-down");
    assert.equal(((await answer.json()) as { error: { code: string } }).error.code, "shutting_down");
    // The cut-off requests were aborted upstream, so the simulators stop generating them.
    const running = async () => {
      const pages = await Promise.all(sims.map(async (s) => (await fetch(`${s.url}/metrics`)).text()));
      return pages.reduce((sum, page) => sum + metricSum(page, "vllm:num_requests_running"), 0);
    };
    assert.ok(await eventually(async () => (await running()) === 0), "nothing left running upstream");
  });
});
