import assert from "node:assert/strict";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
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
    body: (await response.json()) as { error?: { type: string; code: string } },
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

  it("passes upstream validation errors through (bad max_tokens)", async () => {
    const r = await post(
      router,
      "/v1/completions",
      JSON.stringify({ model: MODEL, prompt: "x", max_tokens: -5 }),
    );
    assert.equal(r.status, 400);
    assert.ok(r.headers.get("x-llmd-endpoint"));
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
