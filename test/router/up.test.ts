import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import OpenAI from "openai";

/** The installed `llmd` command (`npx llmd`): tsx registered in-process, nothing in execArgv. */
const CLI_BIN = fileURLToPath(new URL("../../bin/llmd.js", import.meta.url));

/** Pids of the direct children of `pid` (Linux /proc). */
async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  return text.split(/\s+/).filter(Boolean).map(Number);
}

/** Whether `pid` runs (Linux /proc): a dead-but-unreaped process (state Z) counts as gone. */
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  return stat !== "" && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

/** Starts `llmd up` with `replicas` simulators; resolves with the router URL and the sims' pids. */
async function startUp(
  replicas: number,
  flags: string[] = [],
): Promise<{ up: ChildProcess; url: string; children: number[] }> {
  const up = spawn(
    process.execPath,
    [
      CLI_BIN,
      "up",
      "--replicas",
      String(replicas),
      "--port",
      "0",
      "--sim-base-port",
      "0",
      "--speed",
      "50",
    ].concat(flags),
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  let url: string | undefined;
  for await (const chunk of up.stdout as AsyncIterable<Buffer>) {
    out += chunk.toString();
    url = /router listening on (http:\/\/\S+)/.exec(out)?.[1];
    if (url) break;
  }
  assert.ok(url, `no router URL in: ${out}`);
  const children = await childrenOf(up.pid as number);
  assert.equal(children.length, replicas, `children ${children}`);
  return { up, url, children };
}

describe("llmd up", () => {
  it("starts replicas and the router, serves a request, and SIGTERM stops every child", async () => {
    const { up, url, children } = await startUp(2, ["--stream-interval", "4"]);
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "meta-llama/Llama-3.1-8B-Instruct",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 4,
      }),
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get("x-llmd-endpoint") ?? "", /127\.0\.0\.1:\d+/);
    // --stream-interval 4 reaches the simulators: 9 tokens stream as 1 + 4 + 4.
    const stream = await fetch(`${url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "meta-llama/Llama-3.1-8B-Instruct",
        prompt: "hi",
        max_tokens: 9,
        ignore_eos: true,
        stream: true,
      }),
    });
    const events = (await stream.text()).split("\n\n").filter((e) => e.startsWith("data: {"));
    assert.equal(events.length, 3, events.join("\n"));

    up.kill("SIGTERM");
    const [code] = await once(up, "exit");
    assert.equal(code, 0);
    for (const pid of children) assert.equal(await running(pid), false, `child ${pid} outlived llmd up`);
  });

  it("SIGTERM drains: a stream in flight through the router completes, then every process exits", async () => {
    const { up, url, children } = await startUp(2, ["--speed", "1"]);
    const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: "unused", maxRetries: 0 });
    const stream = await client.completions.create({
      model: "meta-llama/Llama-3.1-8B-Instruct",
      prompt: "drain me",
      max_tokens: 300,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
    } as OpenAI.CompletionCreateParamsStreaming);
    const chunks = stream[Symbol.asyncIterator]();
    assert.equal((await chunks.next()).done, false, "the stream started");
    up.kill("SIGTERM");
    let tokens = -1;
    for (let r = await chunks.next(); !r.done; r = await chunks.next()) {
      if (r.value.usage) tokens = r.value.usage.completion_tokens;
    }
    assert.equal(tokens, 300, "the stream ran to its end through the drain");
    const [code] = await once(up, "exit");
    assert.equal(code, 0);
    for (const pid of children) assert.equal(await running(pid), false, `child ${pid} outlived llmd up`);
  });

  it("simulators exit on their own when llmd up is SIGKILLed", async () => {
    const { up, children } = await startUp(2);
    assert.ok(await running(children[0] as number), "simulator runs before the kill");
    up.kill("SIGKILL");
    await once(up, "exit");
    // Bounded wait: the children notice the closed IPC channel within milliseconds.
    for (let i = 0; i < 100; i++) {
      const states = await Promise.all(children.map(running));
      if (!states.includes(true)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const survivors: number[] = [];
    for (const pid of children) if (await running(pid)) survivors.push(pid);
    for (const pid of survivors) process.kill(pid, "SIGKILL");
    assert.deepEqual(survivors, [], "simulators outlived a SIGKILLed llmd up");
  });
});
