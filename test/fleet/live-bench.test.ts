import assert from "node:assert/strict";
import { once } from "node:events";
import { createConnection, createServer, type Server } from "node:net";
import { after, before, describe, it } from "node:test";
import { runLive } from "../../src/load/load-generator.ts";
import { summarize } from "../../src/measure/summary.ts";
import { CHAT_DEFAULTS, chatSession } from "../../src/workload/chat.ts";
import { ClosedLoopWorkload } from "../../src/workload/closed-loop.ts";
import { SyntheticPromptBuilder } from "../../src/workload/synthetic-prompt.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, startTestSim } from "../sim/helpers.ts";

/** A TCP relay in front of `target` that counts the client connections it accepted. */
async function countingRelay(
  target: URL,
): Promise<{ url: string; connections: () => number; server: Server }> {
  let connections = 0;
  const server = createServer((client) => {
    connections++;
    const upstream = createConnection(Number(target.port), target.hostname);
    client.pipe(upstream).pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, connections: () => connections, server };
}

/** Two closed-loop chat sessions for 1.5 s against `url`, 16-token blocks. */
function replayChat(url: string | readonly string[]) {
  const options = { ...CHAT_DEFAULTS, minTurns: 3, maxTurns: 3, thinkMeanMs: 200, seed: 4 };
  return runLive({
    url,
    model: MODEL,
    workload: new ClosedLoopWorkload({
      name: "chat",
      concurrency: 2,
      rampMs: 100,
      stopAtMs: 1500,
      factory: (i) => chatSession(options, i),
    }),
    prompts: new SyntheticPromptBuilder(),
    durationMs: 1500,
    timeScale: 1,
    blockTokens: 16,
  });
}

describe("llmd bench load generator against llmd sim on loopback", () => {
  let sim: SimServer;
  before(async () => {
    sim = await startTestSim();
  });
  after(() => sim.close());

  it("replays closed-loop chat over HTTP; one server's cached tokens equal the ideal ceiling", async () => {
    const records = await replayChat(sim.url);
    assert.ok(records.length >= 6, `only ${records.length} requests`);
    for (const r of records) {
      assert.equal(r.error, undefined);
      assert.ok(r.firstTokenMs > r.arrivalMs && r.endMs >= r.firstTokenMs);
      assert.ok(r.outputTokens >= 80 && r.outputTokens <= 120);
      assert.equal(r.cachedTokens, r.idealCachedTokens, r.id);
    }
    const later = records.filter((r) => !r.id.endsWith(":0"));
    assert.ok(later.every((r) => r.cachedTokens > 0));
    const s = summarize(records, {
      fromMs: 0,
      toMs: 1500,
      slo: { ttftMs: 1000, itlMs: 100 },
      gpuHourPrice: 2.71,
      gpus: 1,
    });
    assert.equal(s.captured, 1);
  });

  it("keeps connections alive between a session's turns (no TCP setup inside TTFT)", async () => {
    const relay = await countingRelay(new URL(sim.url));
    try {
      const records = await replayChat(relay.url);
      assert.ok(records.length >= 6, `only ${records.length} requests`);
      assert.ok(records.every((r) => r.error === undefined));
      // Two sessions share a few pooled connections (a new session's first turn may be sent before
      // the previous turn's socket is back in the pool); a connection per request was the bug.
      assert.ok(
        relay.connections() < records.length / 2,
        `${relay.connections()} connections for ${records.length} requests`,
      );
    } finally {
      relay.server.close();
    }
  });

  it("takes several servers in turn, request by request", async () => {
    const pair = await Promise.all([startTestSim(), startTestSim()]);
    try {
      const records = await replayChat(pair.map((s) => s.url));
      assert.ok(records.length >= 6, `only ${records.length} requests`);
      assert.ok(records.every((r) => r.error === undefined));
      const served = await Promise.all(pair.map((s) => successes(s.url)));
      assert.deepEqual(served, [Math.ceil(records.length / 2), Math.floor(records.length / 2)]);
    } finally {
      await Promise.all(pair.map((s) => s.close()));
    }
  });
});

/** `vllm:request_success_total` summed over its labels, from the server's /metrics. */
async function successes(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n"))
    if (line.startsWith("vllm:request_success_total")) total += Number(line.split(" ").at(-1));
  return total;
}
