/**
 * A replay socket that answers nothing never stalls the stream: over real ZeroMQ, a `llmd sim`
 * skips a batch on its live stream (`LLMD_KV_EVENTS_SKIP_SEQS`), the subscriber's replay request
 * goes to a port where nobody listens, times out, and the batches after it are applied anyway,
 * the skipped one counted lost.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { KvEventSubscriber } from "../../src/kv-events/subscriber.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { promptOfTokens } from "../sim/helpers.ts";
import { eventually, MODEL, startSims } from "../router/harness.ts";
import { freePort } from "../../src/core/free-port.ts";

describe("a dead replay socket", () => {
  let sim: SimServer;
  let subscriber: KvEventSubscriber;
  let batches = 0;

  before(async () => {
    const socketPort = await freePort("0.0.0.0");
    process.env.LLMD_KV_EVENTS_SKIP_SEQS = "1";
    [sim] = (await startSims(1, {
      "kv-events-config": JSON.stringify({ enable_kv_cache_events: true, endpoint: `tcp://*:${socketPort}` }),
    })) as [SimServer];
    delete process.env.LLMD_KV_EVENTS_SKIP_SEQS;
    subscriber = new KvEventSubscriber(
      {
        discoverPods: true,
        zmqEndpoint: "",
        topicFilter: "kv@",
        socketPort,
        replaySocketPort: await freePort("0.0.0.0"), // nothing listens there
        replayTimeoutMs: 300,
        engineType: "vllm",
      },
      {
        apply: () => {
          batches++;
        },
        reset: () => {},
      },
    );
    await subscriber.start();
    subscriber.setPods([{ key: "default/sim", address: "127.0.0.1", port: sim.port }]);
  });

  after(async () => {
    subscriber.close();
    await sim.close();
  });

  it("times the replay out and applies the batches after the gap", async () => {
    let n = 0;
    assert.ok(
      await eventually(async () => {
        const res = await fetch(`${sim.url}/v1/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: MODEL, prompt: promptOfTokens(64, `d${n++}`), max_tokens: 1 }),
        });
        await res.text();
        const stats = subscriber.stats();
        return stats.replayFailures >= 1 && stats.applied >= 3;
      }, 10_000),
      JSON.stringify(subscriber.stats()),
    );
    const stats = subscriber.stats();
    assert.ok(stats.lost >= 1, "the skipped batch is counted lost");
    assert.equal(batches, stats.applied);
  });
});
