/**
 * SIGTERM on the real processes (`llmd router`, `llmd sim`): the first signal drains (readiness
 * 503, liveness 200, new requests 503 `rejected-shutting-down`, in-flight streams finish, exit 0);
 * a second signal exits at once.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import OpenAI from "openai";
import {
  exitOf,
  MODEL,
  type RouterProcess,
  restOfStream,
  type SimProcess,
  spawnRouter,
  spawnSim,
} from "./harness.ts";

const SIM_ARGS = ["--mode", "echo", "--time-to-first-token", "5ms", "--inter-token-latency", "4ms"];

/** A streamed completion of `tokens` tokens whose first chunk has arrived. */
async function startedStream(baseURL: string, tokens: number) {
  const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: "unused", maxRetries: 0 });
  const stream = await client.completions.create({
    model: MODEL,
    prompt: "through the signal",
    max_tokens: tokens,
    stream: true,
    stream_options: { include_usage: true },
    ignore_eos: true,
  } as OpenAI.CompletionCreateParamsStreaming);
  const iterator = stream[Symbol.asyncIterator]();
  assert.equal((await iterator.next()).done, false);
  return iterator;
}

async function status(url: string, init?: RequestInit): Promise<{ status: number; reason: string | null }> {
  const res = await fetch(url, init);
  await res.arrayBuffer();
  return { status: res.status, reason: res.headers.get("x-llm-d-request-dropped-reason") };
}

const completion = (tokens: number): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model: MODEL, prompt: "new", max_tokens: tokens }),
});

describe("SIGTERM drains the processes", () => {
  const children: { child: SimProcess["child"] }[] = [];
  after(() => {
    for (const { child } of children) if (child.exitCode === null) child.kill("SIGKILL");
  });

  it("llmd router: not ready at once, live, refuses new requests, finishes the stream, exits 0", async () => {
    const sim = await spawnSim(SIM_ARGS);
    children.push(sim);
    const router: RouterProcess = await spawnRouter(["--endpoints", sim.url, "--drain-timeout", "20s"]);
    children.push(router);
    const stream = await startedStream(router.url, 200);

    router.child.kill("SIGTERM");
    // The drain starts when the signal is handled: poll /ready until it says so.
    let ready = await status(`${router.url}/ready`);
    for (let i = 0; i < 100 && ready.status === 200; i++) ready = await status(`${router.url}/ready`);
    assert.equal(ready.status, 503, "readiness turns 503");
    assert.equal((await status(`${router.url}/health`)).status, 200, "liveness stays 200");
    assert.deepEqual(await status(`${router.url}/v1/completions`, completion(1)), {
      status: 503,
      reason: "rejected-shutting-down",
    });
    assert.equal(await restOfStream(stream), 200, "the in-flight stream completes");
    assert.equal(await exitOf(router.child), 0);
    assert.match(router.stderr(), /SIGTERM, draining/);
    sim.child.kill("SIGTERM");
    assert.equal(await exitOf(sim.child), 0);
  });

  it("llmd router: a second signal exits at once, 128 + the signal", async () => {
    const sim = await spawnSim(SIM_ARGS);
    children.push(sim);
    const router = await spawnRouter(["--endpoints", sim.url, "--drain-timeout", "60s"]);
    children.push(router);
    const stream = await startedStream(router.url, 5000);
    router.child.kill("SIGTERM");
    let ready = await status(`${router.url}/ready`);
    for (let i = 0; i < 100 && ready.status === 200; i++) ready = await status(`${router.url}/ready`);
    assert.equal(ready.status, 503);
    router.child.kill("SIGTERM");
    assert.equal(await exitOf(router.child), 143, "exits without waiting for the 20 s stream");
    assert.ok((await restOfStream(stream)) !== 5000, "the stream was cut");
    sim.child.kill("SIGKILL");
  });

  it("llmd sim: /ready 503 and /health 200 while draining, new requests 503 rejected-shutting-down, the stream completes, exit 0", async () => {
    const sim = await spawnSim([...SIM_ARGS, "--drain-timeout", "20"]);
    children.push(sim);
    assert.equal((await status(`${sim.url}/ready`)).status, 200);
    const stream = await startedStream(sim.url, 200);
    sim.child.kill("SIGTERM");
    let ready = await status(`${sim.url}/health/ready`);
    for (let i = 0; i < 100 && ready.status === 200; i++) ready = await status(`${sim.url}/health/ready`);
    assert.equal(ready.status, 503);
    assert.equal((await status(`${sim.url}/ready`)).status, 503);
    assert.equal((await status(`${sim.url}/health`)).status, 200);
    assert.deepEqual(await status(`${sim.url}/v1/completions`, completion(1)), {
      status: 503,
      reason: "rejected-shutting-down",
    });
    assert.equal(await restOfStream(stream), 200);
    assert.equal(await exitOf(sim.child), 0);
  });
});
