/**
 * Centralized mode over real ZeroMQ: the router's subscriber binds `zmqEndpoint`, `llmd sim`s
 * connect their PUB sockets to it (a non-wildcard `endpoint`, as vLLM connects), and each batch is
 * filed under the endpoint its topic names (`kv@<ip>:<port>@<model>`); a publisher that is no
 * endpoint of the pool is counted, not indexed.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { KvEventSubscriber } from "../../src/kv-events/subscriber.ts";
import type { IndexKvEvent } from "../../src/kv-index/precise-index.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { promptOfTokens } from "../sim/helpers.ts";
import { eventually, MODEL, startSims } from "../router/harness.ts";

describe("centralized KV-event subscription", () => {
  const received: { podKey: string; model: string; events: readonly IndexKvEvent[] }[] = [];
  let subscriber: KvEventSubscriber;
  let sims: SimServer[];

  before(async () => {
    subscriber = new KvEventSubscriber(
      {
        discoverPods: false,
        zmqEndpoint: "tcp://127.0.0.1:*",
        topicFilter: "kv@",
        socketPort: 5557,
        replaySocketPort: 0,
        replayTimeoutMs: 1000,
        engineType: "vllm",
      },
      { apply: (events, podKey, model) => received.push({ podKey, model, events }), reset: () => {} },
    );
    await subscriber.start();
    const endpoint = subscriber.boundEndpoint!;
    sims = await startSims(2, {
      "kv-events-config": JSON.stringify({ enable_kv_cache_events: true, endpoint }),
    });
    subscriber.setPods([{ key: "default/known", address: "127.0.0.1", port: sims[0]!.port }]);
  });

  after(async () => {
    subscriber.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  it("files each engine's batches under the endpoint its topic names", async () => {
    let n = 0;
    const send = (sim: SimServer) =>
      fetch(`${sim.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, prompt: promptOfTokens(64, `p${n++}`), max_tokens: 1 }),
      }).then((r) => r.text());
    // PUB drops what it sends before its connection is up: send until batches arrive.
    assert.ok(
      await eventually(async () => {
        await Promise.all(sims.map(send));
        return received.length > 0 && subscriber.stats().unknownPod > 0;
      }),
    );
    assert.ok(received.every((r) => r.podKey === "default/known" && r.model === MODEL));
    assert.ok(received.some((r) => r.events.some((e) => e.type === "BlockStored")));
    assert.equal(subscriber.stats().sockets, 1);
  });
});
