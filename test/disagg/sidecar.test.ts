/**
 * `llmd sidecar` on its own, over loopback simulators: data-parallel ranks (rank i on port + i in
 * front of the model server's port + i) and the graceful drain (an accepted stream runs to its
 * end while new requests get 503 `rejected-shutting-down`).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { startSidecar } from "../../src/gateway/sidecar.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, startSims } from "../router/harness.ts";
import { NIXL, nixlSims } from "./pd-stack.ts";

const RETRY = { maxRetries: 0, backoffMs: 10 };
const chat = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    model: MODEL,
    messages: [{ role: "user", content: "tell me about foxes ".repeat(20) }],
    ...extra,
  });

/** Simulators on `count` consecutive ports (a random base, tried again when one is taken). */
async function consecutiveSims(count: number, overrides: Record<string, unknown>): Promise<SimServer[]> {
  for (let tries = 0; ; tries++) {
    const base = 20_000 + Math.floor(Math.random() * 20_000);
    const started = await Promise.allSettled(
      Array.from({ length: count }, (_, i) => startSims(1, { ...overrides, port: base + i })),
    );
    const sims = started.flatMap((s) => (s.status === "fulfilled" ? s.value : []));
    if (sims.length === count) return sims;
    await Promise.all(sims.map((s) => s.close()));
    if (tries === 5) throw new Error("no consecutive free ports");
  }
}

test("--data-parallel-size 2: rank i listens on port + i and runs both legs on model-server port + i", async () => {
  const [prefill] = (await nixlSims(["p"])) as [SimServer];
  const ranks = await consecutiveSims(2, { "kv-transfer-config": JSON.stringify(NIXL) });
  const modelServerPort = Number(new URL(ranks[0]!.url).port);
  // Two consecutive free ports for the sidecar's ranks: found by binding them, then released.
  const free = await consecutiveSims(2, {});
  const port = Number(new URL(free[0]!.url).port);
  await Promise.all(free.map((s) => s.close()));
  const sidecar = await startSidecar({ port, modelServerPort, dataParallelSize: 2, retry: RETRY });
  try {
    assert.deepEqual(sidecar.urls, [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`]);
    for (const [i, url] of sidecar.urls.entries()) {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-prefiller-host-port": prefill.url.slice(7) },
        body: chat({ max_tokens: 3 }),
      });
      assert.equal(res.status, 200);
      const metrics = await (await fetch(`${ranks[i]!.url}/metrics`)).text();
      assert.match(metrics, /llmd_sim_kv_transfers_total 1/, `rank ${i} pulled the KV`);
    }
  } finally {
    await sidecar.close();
    await Promise.all([prefill.close(), ...ranks.map((s) => s.close())]);
  }
});

test("drain: an accepted stream finishes, a new request gets 503 rejected-shutting-down", async () => {
  const [decode] = await startSims(1, { "inter-token-latency": "20ms" });
  const sidecar = await startSidecar({
    port: 0,
    modelServerPort: Number(new URL(decode!.url).port),
    retry: RETRY,
  });
  try {
    const url = sidecar.urls[0] as string;
    const stream = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chat({ max_tokens: 40, stream: true }),
    });
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader();
    let text = new TextDecoder().decode((await reader.read()).value);
    const drained = sidecar.drain(10_000);
    const refused = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: chat({ max_tokens: 1 }),
    });
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("x-llm-d-request-dropped-reason"), "rejected-shutting-down");
    for (let r = await reader.read(); !r.done; r = await reader.read())
      text += new TextDecoder().decode(r.value);
    assert.match(text, /data: \[DONE\]/, "the stream ran to its end");
    assert.deepEqual(await drained, { cutOff: 0 });
  } finally {
    await sidecar.close();
    await decode!.close();
  }
});
