import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, routerFor, startSims } from "./harness.ts";

const LIMIT = 64 * 1024;

async function post(router: Router, path: string, body: string) {
  const response = await fetch(`${router.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as { error?: { type: string; code: string; param: string | null } },
  };
}

describe("malformed requests, limits and slow clients", () => {
  let sims: SimServer[];
  let router: Router;
  before(async () => {
    sims = await startSims(2);
    router = await routerFor(
      sims.map((s) => s.url),
      undefined,
      { maxBodyBytes: LIMIT },
    );
  });
  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  const malformed: [string, string, string][] = [
    ["broken JSON", "/v1/chat/completions", "{"],
    ["no model", "/v1/chat/completions", JSON.stringify({ messages: [{ role: "user", content: "x" }] })],
    ["empty model", "/v1/completions", JSON.stringify({ model: "", prompt: "x" })],
    ["no messages", "/v1/chat/completions", JSON.stringify({ model: MODEL })],
    ["no prompt", "/v1/completions", JSON.stringify({ model: MODEL })],
  ];
  for (const [name, path, body] of malformed) {
    it(`answers ${name} with 400 OpenAI error JSON`, async () => {
      const r = await post(router, path, body);
      assert.equal(r.status, 400);
      assert.equal(r.body.error?.type, "invalid_request_error");
    });
  }

  it("answers an unknown model with 404 and an unknown path with 404", async () => {
    const r = await post(router, "/v1/completions", JSON.stringify({ model: "nope", prompt: "x" }));
    assert.deepEqual([r.status, r.body.error?.code], [404, "model_not_found"]);
    const missing = await fetch(`${router.url}/v1/unknown`);
    assert.equal(missing.status, 404);
  });

  const badParams: [string, Record<string, unknown>, string][] = [
    ["a string temperature", { temperature: "hot" }, "temperature"],
    ["a negative temperature", { temperature: -1 }, "temperature"],
    ["top_p over 1", { top_p: 2 }, "top_p"],
    ["n of 0", { n: 0 }, "n"],
    ["negative max_tokens", { max_tokens: -5 }, "max_tokens"],
    ["an unknown role", { messages: [{ role: "wizard" }] }, "messages[0].role"],
  ];
  for (const [name, extra, param] of badParams) {
    it(`answers ${name} itself with 400 naming ${param}, before any upstream work`, async () => {
      const body = { model: MODEL, messages: [{ role: "user", content: "x" }], ...extra };
      const r = await post(router, "/v1/chat/completions", JSON.stringify(body));
      assert.equal(r.status, 400);
      assert.deepEqual([r.body.error?.code, r.body.error?.param], ["invalid_request", param]);
      assert.equal(r.headers.get("x-llmd-endpoint"), null, "no endpoint was picked");
    });
  }

  it("the openai client gets a BadRequestError from the router for a bad parameter", async () => {
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const request = { model: MODEL, prompt: "x", top_p: 2 } as const;
    await assert.rejects(client.completions.create(request).asResponse(), (err: unknown) => {
      assert.ok(err instanceof OpenAI.BadRequestError, String(err));
      assert.deepEqual([err.status, err.param], [400, "top_p"]);
      assert.equal(err.headers?.get("x-llmd-endpoint"), null);
      return true;
    });
  });

  it("passes through what only the model server refuses (n = 2 on the simulator)", async () => {
    const r = await post(router, "/v1/completions", JSON.stringify({ model: MODEL, prompt: "x", n: 2 }));
    assert.deepEqual([r.status, r.body.error?.param], [400, "n"]);
    assert.ok(r.headers.get("x-llmd-endpoint"), "the simulator answered");
  });

  it("rejects a body over the limit with 413", async () => {
    const big = JSON.stringify({ model: MODEL, prompt: "y".repeat(LIMIT) });
    const r = await post(router, "/v1/completions", big);
    assert.equal(r.status, 413);
  });

  it("a client that stops reading its stream does not delay others", async () => {
    const body = JSON.stringify({
      model: MODEL,
      prompt: "slow reader",
      stream: true,
      max_tokens: 4000,
      ignore_eos: true,
    });
    const { port } = new URL(router.url);
    const socket = connect(Number(port), "127.0.0.1");
    socket.write(
      `POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    socket.pause();
    try {
      const started = performance.now();
      for (let i = 0; i < 10; i++) {
        const r = await post(
          router,
          "/v1/completions",
          JSON.stringify({ model: MODEL, prompt: `quick ${i}`, max_tokens: 2 }),
        );
        assert.equal(r.status, 200);
      }
      // Ten short requests at 5 ms TTFT each: well under the 4 s the stalled stream lasts.
      assert.ok(performance.now() - started < 3000);
    } finally {
      socket.destroy();
    }
  });
});
