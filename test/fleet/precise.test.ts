/**
 * The fleet simulator feeds the engines' KV events to the router's precise prefix index in virtual
 * time: the events arrive `kvEventDelayMs` after the engine call (a step when it is scheduled) that
 * emitted them, as `llmd sim` publishes them, carry the tier
 * (`medium`) of the engines' offload tiers, and the index they build is what routes.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loadConfig } from "../../src/config/index.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { createEngine, parseProfileName } from "../../src/engine/index.ts";
import { type KvDelivery, KvEventFeed } from "../../src/fleet/kv-event-feed.ts";
import { Replica } from "../../src/fleet/replica.ts";
import { runScenario } from "../../src/fleet/run-scenario.ts";
import { readPrefixMatch } from "../../src/kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../src/scheduler/framework/data-keys.ts";
import { isKvEventConsumer } from "../../src/scheduler/framework/hosted.ts";
import type { DataProducer, PreRequest, SchedulingContext } from "../../src/scheduler/framework/types.ts";
import { resultFor } from "../../src/scheduler/plugins/testing.ts";
import { parseScenario } from "../../src/workload/scenario.ts";

const configs = join(import.meta.dirname, "../../examples/configs");
const preciseYaml = readFileSync(join(configs, "precise.yaml"), "utf8");

/** Mooncake conversations on 2 small replicas (4,096 blocks of 16 tokens each): past their KV. */
function scenario(config: string, overrides: string[] = []) {
  const yaml = `
durationS: 60
warmupS: 10
drainS: 60
fleet: { replicas: 2, engine: { kvCacheSize: 4096 } }
router: { config: ${config} }
workload: { type: mooncake, timeScale: 1, limit: 150 }
`;
  return parseScenario(yaml, join(configs, "inline.yaml"), overrides);
}

describe("precise prefix routing in the fleet simulator", () => {
  it("delivers every engine's events to the index, each removal known kvEventDelayMs after its step was scheduled", async () => {
    const run = await runScenario(scenario("precise.yaml", ["kvEventDelayMs=40"]));
    const kv = run.result.kvEvents;
    assert.ok(kv, "a precise config consumes KV events");
    assert.ok(kv.batches > 0);
    assert.ok((kv.storedBlocks.GPU ?? 0) > 0);
    assert.ok((kv.removedBlocks.GPU ?? 0) > 0, "the small KV evicts");
    // Published when the evicting step is scheduled, not when it ends: the delay is all there is.
    assert.equal(kv.stalenessP50Ms, 40);
    assert.equal(kv.stalenessP99Ms, 40);
    assert.ok(run.summary.hitRate > 0, "the precise match steers requests to their cached prefixes");
  });

  it("the engines emit nothing for a config without a KV-event consumer", async () => {
    const run = await runScenario(scenario("default.yaml"));
    assert.equal(run.result.kvEvents, undefined);
  });

  it("a CPU offload tier's moves reach the index with medium CPU", async () => {
    const run = await runScenario(scenario("precise.yaml", ["fleet.engine.cpuOffloadGb=1"]));
    const kv = run.result.kvEvents!;
    assert.ok((kv.storedBlocks.CPU ?? 0) > 0, "GPU evictions are offloaded to CPU");
    assert.ok((kv.removedBlocks.GPU ?? 0) > 0);
  });

  it("the index learns a prompt when its step's events arrive, delayMs after the step was scheduled, or speculatively", () => {
    const clock = new ManualClock();
    clock.set(1000);
    const router = loadConfig(preciseYaml, { clock, allowExperimentalPlugins: true });
    const producer = router.plugins.get("precise-prefix-cache-producer") as DataProducer;
    const consumers = [...router.plugins.values()].filter(isKvEventConsumer);
    const engine = createEngine({ profile: parseProfileName("h200-llama3-8b")!, seed: 1 });
    const replica = new Replica(0, engine, "llama3-8b");
    const deliveries: KvDelivery[] = [];
    const feed = new KvEventFeed(consumers, 25, "llama3-8b", clock, (d) => deliveries.push(d));
    feed.attach(replica);
    const tokens = Uint32Array.from({ length: 1024 }, (_, i) => (i * 7919) % 50000);
    const context = (prompt: Uint32Array) =>
      ({
        request: { model: "llama3-8b", tokens: prompt, attributes: new Map() },
        state: new Map(),
      }) as unknown as SchedulingContext;
    const matched = (prompt = tokens) => {
      const ctx = context(prompt);
      producer.produce(ctx, [replica.endpoint]);
      const stateKey = attributeKey(PREFIX_CACHE_MATCH_INFO, "precise-prefix-cache-producer");
      const result = readPrefixMatch(ctx.state, stateKey);
      return result?.byEndpoint.get(replica.endpoint.metadata.key)?.matchBlocks;
    };
    assert.equal(engine.add({ id: "a", promptTokens: tokens, maxTokens: 4 }, 1000), null);
    const step = engine.step(1000)!;
    assert.ok(step.durationMs > 25, "the prefill step outlasts the delay");
    assert.equal(deliveries.length, 1, "the step's batch is published as the step is scheduled");
    const delivery = deliveries[0]!;
    assert.equal(delivery.deliverAtMs, 1000 + 25);
    assert.equal(matched(), 0, "nothing is known before the events arrive");
    clock.set(delivery.deliverAtMs);
    feed.deliver(delivery);
    assert.equal(matched(), 1024 / 64, "every full 64-token block of the prompt is held");
    // speculativeIndexing: a decision counts as held until its events confirm it or 30 s pass.
    const other = tokens.map((t) => t + 1);
    const decided = context(other);
    producer.produce(decided, [replica.endpoint]);
    (producer as unknown as PreRequest).preRequest(decided, resultFor(replica.endpoint));
    assert.equal(matched(other), 1024 / 64);
    clock.set(delivery.deliverAtMs + 29_999);
    assert.equal(matched(other), 1024 / 64, "still held while a request may wait in the queue");
    clock.set(delivery.deliverAtMs + 30_001);
    assert.equal(matched(other), 0, "the speculative entry expired unconfirmed");
  });
});
