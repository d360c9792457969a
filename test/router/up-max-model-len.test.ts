/** `llmd up --max-model-len` reaches the simulators: a prompt longer than it gets vLLM's 400. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { spawnUp, stopChild } from "./harness.ts";

test("llmd up --max-model-len caps the simulators' context", async () => {
  const { child, url } = await spawnUp([
    "--replicas",
    "1",
    "--max-model-len",
    "64",
    "--responses-store",
    "off",
  ]);
  try {
    const send = (prompt: string) =>
      fetch(`${url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "meta-llama/Llama-3.1-8B-Instruct", prompt, max_tokens: 4 }),
      });
    assert.equal((await send("short")).status, 200);
    const long = await send("word ".repeat(200));
    assert.equal(long.status, 400);
    assert.match(await long.text(), /maximum context length is 64 tokens/);
  } finally {
    await stopChild(child);
  }
});
