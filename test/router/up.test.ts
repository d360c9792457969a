import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const CLI_MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of the direct children of `pid` (Linux /proc). */
async function childrenOf(pid: number): Promise<number[]> {
  const { readFile } = await import("node:fs/promises");
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, "utf8").catch(() => "");
  return text.split(/\s+/).filter(Boolean).map(Number);
}

describe("llmd up", () => {
  it("starts replicas and the router, serves a request, and SIGTERM stops every child", async () => {
    const up = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        CLI_MAIN,
        "up",
        "--replicas",
        "2",
        "--port",
        "0",
        "--sim-base-port",
        "0",
        "--speed",
        "50",
      ],
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
    assert.equal(children.length, 2, `children ${children}`);

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

    up.kill("SIGTERM");
    const [code] = await once(up, "exit");
    assert.equal(code, 0);
    for (const pid of children) assert.equal(alive(pid), false, `child ${pid} outlived llmd up`);
  });
});
