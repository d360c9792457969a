/** `--scheduling-policy priority` over HTTP: the body's `priority` orders the waiting queue (lower first). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { completeInto, MODEL, metric, startTestSim, waitForMetrics } from "./helpers.ts";

/** Waits until the simulator reports `waiting` queued requests (its one seat taken). */
async function untilWaiting(url: string, waiting: number): Promise<void> {
  const samples = await waitForMetrics(
    url,
    (s) => metric(s, "vllm:num_requests_running") === 1 && metric(s, "vllm:num_requests_waiting") === waiting,
    10_000,
  );
  assert.equal(metric(samples, "vllm:num_requests_waiting"), waiting);
}

/** A short completion at `priority` decoding `maxTokens` tokens; its id joins `done` when it finishes. */
const completeAt = (url: string, priority: number, maxTokens: number, done: string[], id: string) =>
  completeInto(done, id, url, { prompt: "hello there", max_tokens: maxTokens, ignore_eos: true, priority });

async function finishOrder(policy: string): Promise<string[]> {
  const sim = await startTestSim({ "max-num-seqs": 1, "scheduling-policy": policy });
  try {
    const done: string[] = [];
    // One seat: "blocker" runs while "low" then "high" queue behind it.
    // The blocker (~0.5 s of decode) holds the seat until both others are queued.
    const runs = [completeAt(sim.url, 0, 500, done, "blocker")];
    await untilWaiting(sim.url, 0);
    runs.push(completeAt(sim.url, 5, 5, done, "low"));
    await untilWaiting(sim.url, 1);
    runs.push(completeAt(sim.url, -1, 5, done, "high"));
    await untilWaiting(sim.url, 2);
    await Promise.all(runs);
    return done;
  } finally {
    await sim.close();
  }
}

test("priority policy serves the lower `priority` value first among waiting requests", async () => {
  assert.deepEqual(await finishOrder("priority"), ["blocker", "high", "low"]);
});

test("fcfs policy (default) ignores `priority`", async () => {
  assert.deepEqual(await finishOrder("fcfs"), ["blocker", "low", "high"]);
});

test("a non-integer `priority` is a 400", async () => {
  const sim = await startTestSim();
  try {
    const res = await fetch(`${sim.url}/v1/completions`, {
      method: "POST",
      body: JSON.stringify({ model: MODEL, prompt: "x", max_tokens: 1, priority: "high" }),
    });
    assert.equal(res.status, 400);
    assert.match(await res.text(), /priority/);
  } finally {
    await sim.close();
  }
});
