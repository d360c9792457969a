/** `llmd up --max-model-len` reaches the simulators: a prompt longer than it gets vLLM's 400. */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const CLI_BIN = fileURLToPath(new URL("../../bin/llmd.js", import.meta.url));

test("llmd up --max-model-len caps the simulators' context", async () => {
  const args = ["up", "--replicas", "1", "--port", "0", "--sim-base-port", "0", "--max-model-len", "64"];
  const child = spawn(process.execPath, [CLI_BIN, ...args, "--responses-store", "off"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    let out = "";
    let url: string | undefined;
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      out += chunk.toString();
      url = /router listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) break;
    }
    assert.ok(url, out);
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
    const exited = once(child, "exit");
    child.kill("SIGTERM");
    await exited;
  }
});
