import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { Pool } from "undici";
import { sendPrefill } from "./prefill-leg.ts";

/** A loopback server answering POSTs with `answers` in turn (the last one repeats); counts them. */
async function serve(answers: { status: number; body: string; headers?: Record<string, string> }[]) {
  let calls = 0;
  const server = createServer((req, res) => {
    req.resume();
    const answer = answers[Math.min(calls++, answers.length - 1)]!;
    res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers }).end(answer.body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return {
    pool,
    calls: () => calls,
    close: async () => {
      await pool.close();
      server.close();
    },
  };
}

const request = { path: "/v1/chat/completions", headers: {}, body: Buffer.from("{}") };
const ok = {
  status: 200,
  body: JSON.stringify({
    kv_transfer_params: { remote_engine_id: "e" },
    usage: { prompt_tokens: 5, prompt_tokens_details: { cached_tokens: 3 } },
  }),
};
const busy = { status: 503, body: '{"error":{"message":"busy"}}' };

test("502/503/504 are retried up to maxRetries, then the answer is read", async () => {
  const s = await serve([busy, { ...busy, status: 504 }, ok]);
  const outcome = await sendPrefill(s.pool, request, { maxRetries: 2, backoffMs: 1 });
  assert.deepEqual(outcome, {
    kind: "ready",
    answer: { kvTransferParams: { remote_engine_id: "e" }, cachedTokens: 3 },
  });
  assert.equal(s.calls(), 3);
  await s.close();
});

test("past the retries, or for another status, the prefill's own answer is returned", async () => {
  const s = await serve([busy]);
  const outcome = await sendPrefill(s.pool, request, { maxRetries: 1, backoffMs: 1 });
  assert.equal(outcome.kind === "refused" && outcome.status, 503);
  assert.equal(s.calls(), 2);
  const bad = await serve([{ status: 400, body: '{"error":{"message":"bad"}}' }, ok]);
  const refused = await sendPrefill(bad.pool, request, { maxRetries: 3, backoffMs: 1 });
  assert.ok(refused.kind === "refused" && refused.status === 400 && refused.body.toString().includes("bad"));
  assert.equal(bad.calls(), 1, "a 400 is not retried");
  await Promise.all([s.close(), bad.close()]);
});

test("a draining server and a refused connection are unreachable (no work done)", async () => {
  const draining = await serve([
    { ...busy, headers: { "x-llm-d-request-dropped-reason": "rejected-shutting-down" } },
  ]);
  const outcome = await sendPrefill(draining.pool, request, { maxRetries: 0, backoffMs: 1 });
  assert.deepEqual(outcome, {
    kind: "unreachable",
    message: "the prefill endpoint is shutting down",
    draining: true,
  });
  await draining.close();
  const gone = new Pool("http://127.0.0.1:1");
  const refused = await sendPrefill(gone, request, { maxRetries: 1, backoffMs: 1 });
  assert.equal(refused.kind, "unreachable");
  await gone.close();
});

test("an abort during the backoff rejects with the signal's reason", async () => {
  const s = await serve([busy]);
  const controller = new AbortController();
  const reason = new Error("drained");
  setTimeout(() => controller.abort(reason), 20);
  await assert.rejects(
    sendPrefill(s.pool, { ...request, signal: controller.signal }, { maxRetries: 5, backoffMs: 10_000 }),
    (err) => err === reason,
  );
  await s.close();
});
