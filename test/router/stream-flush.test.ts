/**
 * `streamFlushMs`: after a stream's first chunk the router relays chunks coalesced, at most once per
 * interval, over real HTTP. The first token is never held; nothing is lost or reordered.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { after, before, describe, it } from "node:test";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, routerFor, startSims } from "./harness.ts";

const FLUSH_MS = 50;

/** Streams one completion through `url`; resolves with each socket read and the elapsed ms. */
function streamReads(url: string): Promise<{ reads: string[]; elapsedMs: number }> {
  const body = JSON.stringify({
    model: MODEL,
    prompt: "x",
    max_tokens: 60,
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true },
  });
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(`${url}/v1/completions`, { method: "POST" }, (res) => {
      const reads: string[] = [];
      res.setEncoding("utf8");
      res.on("data", (text: string) => reads.push(text));
      res.on("end", () => resolve({ reads, elapsedMs: performance.now() - started }));
    });
    req.on("error", reject);
    req.setHeader("content-type", "application/json");
    req.end(body);
  });
}

describe("router streamFlushMs", () => {
  let sims: SimServer[];
  let router: Router;

  before(async () => {
    sims = await startSims(1, { mode: "random", "inter-token-latency": "2ms" });
    router = await routerFor([sims[0]!.url], undefined, { streamFlushMs: FLUSH_MS });
  });
  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  it("sends the first token alone at once, then at most one write per interval, losing nothing", async () => {
    const { reads, elapsedMs } = await streamReads(router.url);
    const events = reads.join("").split("\n\n").filter(Boolean);
    const tokens = events.filter((e) => e.includes('"text"') && !e.includes('"usage"'));
    assert.equal(tokens.length, 60, "one event per token, all relayed");
    assert.equal(events.at(-1), "data: [DONE]");
    assert.equal(reads[0]!.split("\n\n").filter(Boolean).length, 1, "the first token is not held");
    const bound = Math.ceil(elapsedMs / FLUSH_MS) + 2;
    assert.ok(
      reads.length <= bound,
      `${reads.length} reads over ${elapsedMs.toFixed(0)} ms (bound ${bound})`,
    );
  });

  it("refuses an interval that is not a number of ms >= 0", async () => {
    for (const streamFlushMs of [-1, Number.NaN]) {
      await assert.rejects(routerFor([sims[0]!.url], undefined, { streamFlushMs }), /streamFlushMs must be/);
    }
  });
});
