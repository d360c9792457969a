/** `--scheduling-policy priority` over HTTP: the body's `priority` orders the waiting queue (lower first). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { MODEL, startTestSim } from "./helpers.ts";

async function completeAndStamp(
  url: string,
  priority: number,
  maxTokens: number,
  done: string[],
  id: string,
) {
  const res = await fetch(`${url}/v1/completions`, {
    method: "POST",
    body: JSON.stringify({
      model: MODEL,
      prompt: "hello there",
      max_tokens: maxTokens,
      ignore_eos: true,
      priority,
    }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.json();
  done.push(id);
}

async function finishOrder(policy: string): Promise<string[]> {
  const sim = await startTestSim({ "max-num-seqs": 1, "scheduling-policy": policy });
  try {
    const done: string[] = [];
    // One seat: "blocker" runs while "low" then "high" queue behind it.
    const runs = [completeAndStamp(sim.url, 0, 60, done, "blocker")];
    await sleep(15);
    runs.push(completeAndStamp(sim.url, 5, 5, done, "low"));
    await sleep(15);
    runs.push(completeAndStamp(sim.url, -1, 5, done, "high"));
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
