/**
 * `--long-prefill-token-threshold` over HTTP: a short prompt sent while a long one prefills is served
 * beside it, so it finishes first; without the threshold it waits for the long prefill.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { completeInto, metric, startTestSim, waitForMetrics } from "./helpers.ts";

/** Order in which a ≈ 6,000-token prompt and a short one sent during its prefill finished. */
async function finishOrder(threshold: number | undefined): Promise<string[]> {
  const sim = await startTestSim({
    "max-num-batched-tokens": 1024,
    "long-prefill-token-threshold": threshold,
    "latency-calculator": "per-token",
    "prefill-time-per-token": "0.25ms",
  });
  try {
    const done: string[] = [];
    const long = completeInto(done, "long", sim.url, {
      prompt: "hello ".repeat(4000),
      max_tokens: 1,
      ignore_eos: true,
    });
    await waitForMetrics(sim.url, (s) => metric(s, "vllm:num_requests_running") === 1, 5_000);
    await completeInto(done, "short", sim.url, { prompt: "hi", max_tokens: 2, ignore_eos: true });
    await long;
    return done;
  } finally {
    await sim.close();
  }
}

test("with a long-prefill threshold a short prompt is served beside a long prefill", async () => {
  assert.deepEqual(await finishOrder(256), ["short", "long"]);
});

test("without one (vLLM's default) the short prompt waits for the long prefill", async () => {
  assert.deepEqual(await finishOrder(undefined), ["long", "short"]);
});
