/**
 * Device tiers end to end over real ZeroMQ: a `llmd sim` with a 16-block GPU cache and a CPU offload
 * tier evicts an early prompt's blocks to CPU (`BlockRemoved GPU`, `BlockStored CPU`); the
 * subscriber feeds a precise index, which still matches the prompt, at the CPU weight (0.8), while
 * the newest prompt matches on GPU at 1.0.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { KvEventSubscriber } from "../../src/kv-events/subscriber.ts";
import { PreciseIndex } from "../../src/kv-index/index.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { defaultTokenizer } from "../../src/tokenizer/tokenizer.ts";
import { promptOfTokens } from "../sim/helpers.ts";
import { eventually, MODEL, startSims } from "../router/harness.ts";

const BLOCK = 16;

describe("KV tiers from a simulator with CPU offload", () => {
  let sim: SimServer;
  let subscriber: KvEventSubscriber;
  const index = new PreciseIndex({ blockSizeTokens: BLOCK, maxBytes: 1 << 30, speculativeTtlMs: 2000 });

  before(async () => {
    [sim] = (await startSims(1, {
      "kv-events-config": JSON.stringify({
        enable_kv_cache_events: true,
        endpoint: "tcp://127.0.0.1:*",
        replay_endpoint: "tcp://127.0.0.1:*",
      }),
      "kv-cache-size": 16,
      "cpu-offload-gb": 1,
    })) as [SimServer];
    const port = (endpoint: string) => Number(endpoint.slice(endpoint.lastIndexOf(":") + 1));
    subscriber = new KvEventSubscriber(
      {
        discoverPods: true,
        zmqEndpoint: "",
        topicFilter: "kv@",
        socketPort: port(sim.kvEvents!.endpoint),
        replaySocketPort: port(sim.kvEvents!.replayEndpoint!),
        replayTimeoutMs: 2000,
        engineType: "vllm",
      },
      {
        apply: (events, podKey, model) => index.apply(events, podKey, model, 0),
        reset: (keys) => {
          for (const key of keys) index.clearPod(key);
        },
      },
    );
    await subscriber.start();
    subscriber.setPods([{ key: "default/sim", address: "127.0.0.1", port: sim.port }]);
  });

  after(async () => {
    subscriber.close();
    await sim.close();
  });

  it("matches an offloaded prompt at the CPU weight and the newest at the GPU weight", async () => {
    const prompts = [0, 1, 2, 3].map((i) => promptOfTokens(8 * BLOCK + 1, `t${i}`));
    const match = (prompt: string) =>
      index.match(index.requestKeys(defaultTokenizer.encode(prompt), MODEL), ["default/sim"], 0);
    const send = async (prompt: string) => {
      const res = await fetch(`${sim.url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: MODEL, prompt, max_tokens: 1 }),
      });
      await res.text();
    };
    // One-block probes until a batch comes through: the SUB socket is connected from then on.
    let n = 0;
    assert.ok(
      await eventually(async () => {
        await send(promptOfTokens(BLOCK, `p${n++}`));
        return subscriber.stats().applied > 0;
      }),
    );
    for (const p of prompts) await send(p);
    assert.ok(
      await eventually(() => {
        const first = match(prompts[0]!);
        const last = match(prompts[3]!);
        return first.blocks[0] === 8 && first.weighted[0]! < 8 && last.weighted[0] === 8;
      }),
      JSON.stringify({ stats: subscriber.stats(), first: match(prompts[0]!), last: match(prompts[3]!) }),
    );
    const first = match(prompts[0]!);
    assert.ok(
      Math.abs(first.weighted[0]! - 8 * 0.8) < 1e-9,
      `all of the first prompt is on CPU: ${first.weighted[0]}`,
    );
  });
});
