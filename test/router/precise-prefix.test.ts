/**
 * Precise prefix-cache routing over real ZeroMQ on loopback: five `llmd sim`s stand for the
 * data-parallel ranks of one pod (rank r serves HTTP on its own port and publishes its KV events on
 * `socketPort + r`, replays on `replaySocketPort + r`, as vLLM offsets them), the router's
 * `precise-prefix-cache-producer` subscribes to each rank in pod-discovery mode, and requests go
 * where the engines' events say the prompt's blocks are. Prompts reach the sims directly first, so the router
 * can only know where they are from the events. Covers a sequence gap with replay (the sim's
 * `LLMD_KV_EVENTS_SKIP_SEQS` hook), a mid-stream join (a sim that published before the router
 * started), a publisher restart (a `llmd sim` process killed and restarted on the same ports) and
 * routing while a publisher is dead.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import type { EndpointMetadata } from "../../src/endpoints/endpoint.ts";
import type { Router } from "../../src/gateway/router.ts";
import type { PrecisePrefixCacheProducer } from "../../src/scheduler/plugins/precise-prefix-cache-producer/index.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { defaultTokenizer } from "../../src/tokenizer/tokenizer.ts";
import { promptOfTokens } from "../sim/helpers.ts";
import { eventually, exitOf, MODEL, routerFor, type SimProcess, spawnSim, startSims } from "./harness.ts";

const ROUTER_BLOCK = 64; // the sims' engines use 16-token blocks: the index maps between them
const PROMPT_TOKENS = 640;

async function isFree(port: number, host: string): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** `n` consecutive ports free on every interface (the publishers bind `tcp://*:port`). */
async function freePorts(n: number): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    let free = true;
    for (let p = base; p < base + n && free; p++) free = await isFree(p, "0.0.0.0");
    if (free) return base;
  }
}

function kvEventsConfig(socketPort: number, replayPort: number): string {
  return JSON.stringify({
    enable_kv_cache_events: true,
    publisher: "zmq",
    endpoint: `tcp://*:${socketPort}`,
    replay_endpoint: `tcp://*:${replayPort}`,
    buffer_steps: 1000,
  });
}

function routerConfig(socketPort: number, replayPort: number): string {
  return `apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- type: precise-prefix-cache-producer
  parameters:
    tokenProcessorConfig: {blockSize: ${ROUTER_BLOCK}}
    kvEventsConfig:
      podDiscoveryConfig: {socketPort: ${socketPort}, replaySocketPort: ${replayPort}}
- type: prefix-cache-scorer
  parameters: {prefixMatchInfoProducerName: precise-prefix-cache-producer}
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - {pluginRef: prefix-cache-scorer, weight: 1}
  - {pluginRef: max-score-picker}
`;
}

/** Sends `prompt` (text or token ids) straight to a simulator (not through the router). */
async function sendDirect(url: string, prompt: string | number[]): Promise<void> {
  const res = await fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: MODEL, prompt, max_tokens: 1 }),
  });
  assert.equal(res.status, 200);
  await res.text();
}

const RANKS = 5;
const LLM_D_CONFIGS = join(import.meta.dirname, "../../../shared/data/llm-d-configs");
const PRECISE_CONFIGS = [
  "epp-precise-prefix-cache-config.yaml",
  "sim-epp-kvcache-config.yaml",
  "sim-epp-no-hit-lru.yaml",
  "sim-epp-tokenizer-vllm-http-config.yaml",
];

describe("precise prefix-cache routing from KV events", () => {
  let ports: { socket: number; replay: number };
  let sims: Record<"a" | "b" | "gap" | "join", SimServer>;
  let restarting: SimProcess;
  let restartArgs: string[];
  let router: Router;
  let client: OpenAI;
  let producer: PrecisePrefixCacheProducer;
  let endpoints: EndpointMetadata[];
  const urlKeys = new Map<string, string>();
  const keyOf = (url: string) => urlKeys.get(new URL(url).port)!;
  const joinPrompt = promptOfTokens(PROMPT_TOKENS, "join");

  /** Leading router blocks of `prompt` (text or token ids) the index says `url`'s endpoint holds. */
  const held = (prompt: string | number[], url: string) => {
    const index = producer.cache.index;
    const ids = typeof prompt === "string" ? defaultTokenizer.encode(prompt) : Uint32Array.from(prompt);
    const keys = index.requestKeys(ids, MODEL);
    return index.match(keys, [keyOf(url)], 0).blocks[0]!;
  };
  const fullBlocks = Math.floor(PROMPT_TOKENS / ROUTER_BLOCK);

  async function routedTo(prompt: string | number[]): Promise<string> {
    const { response } = await client.completions
      .create({ model: MODEL, prompt, max_tokens: 1 })
      .withResponse();
    return response.headers.get("x-llmd-endpoint") ?? "";
  }

  before(async () => {
    ports = { socket: await freePorts(RANKS), replay: await freePorts(RANKS) };
    const sim = async (rank: number) => {
      const [server] = await startSims(1, {
        "kv-events-config": kvEventsConfig(ports.socket + rank, ports.replay + rank),
      });
      return server!;
    };
    process.env.LLMD_KV_EVENTS_SKIP_SEQS = "1";
    const gap = await sim(2);
    delete process.env.LLMD_KV_EVENTS_SKIP_SEQS;
    sims = { a: await sim(0), b: await sim(1), gap, join: await sim(3) };
    restartArgs = [
      "--port",
      String(await freePorts(1)),
      "--kv-events-config",
      kvEventsConfig(ports.socket + 4, ports.replay + 4),
    ];
    restarting = await spawnSim(restartArgs);
    // Published before the router exists: the router joins this stream mid-way.
    await sendDirect(sims.join.url, joinPrompt);
    const urls = [sims.a.url, sims.b.url, sims.gap.url, sims.join.url, restarting.url];
    endpoints = urls.map((url, dpRank) => {
      const name = `sim-rank-${dpRank}`;
      urlKeys.set(new URL(url).port, `default/${name}`);
      return {
        key: `default/${name}`,
        name,
        namespace: "default",
        address: "127.0.0.1",
        port: Number(new URL(url).port),
        labels: {},
        dpRank,
      };
    });
    router = await routerFor([], routerConfig(ports.socket, ports.replay), { endpoints });
    producer = router.config.plugins.get("precise-prefix-cache-producer") as PrecisePrefixCacheProducer;
    client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });

  after(async () => {
    await router?.close();
    await Promise.all(Object.values(sims ?? {}).map((s) => s.close()));
    restarting?.child.kill("SIGKILL");
  });

  it("routes a repeated long prompt to the replica whose events show its blocks", async () => {
    const pa = promptOfTokens(PROMPT_TOKENS, "aaaa");
    const pb = promptOfTokens(PROMPT_TOKENS, "bbbb");
    await sendDirect(sims.a.url, pa);
    await sendDirect(sims.b.url, pb);
    assert.ok(
      await eventually(() => held(pa, sims.a.url) === fullBlocks && held(pb, sims.b.url) === fullBlocks),
    );
    assert.equal(held(pa, sims.b.url), 0);
    for (let i = 0; i < 3; i++) {
      assert.equal(await routedTo(pa), keyOf(sims.a.url));
      assert.equal(await routedTo(pb), keyOf(sims.b.url));
    }
    const metrics = await (await fetch(`${router.url}/metrics`)).text();
    assert.match(
      metrics,
      /llm_d_epp_kv_cache_index_size_bytes\{plugin_name="precise-prefix-cache-producer"\} [1-9]/,
    );
  });

  it("routes a token-id prompt by its own ids to the replica whose events show them", async () => {
    const ids = Array.from({ length: PROMPT_TOKENS }, (_, i) => 3000 + ((i * 104_729) % 60_000));
    await sendDirect(sims.b.url, ids);
    assert.ok(await eventually(() => held(ids, sims.b.url) === fullBlocks));
    assert.equal(held(ids, sims.a.url), 0);
    for (let i = 0; i < 3; i++) assert.equal(await routedTo(ids), keyOf(sims.b.url));
  });

  it("fills a sequence gap with a replay from the last applied batch", async () => {
    const prompts = ["gap1", "gap2", "gap3"].map((tag) => promptOfTokens(PROMPT_TOKENS, tag));
    for (const p of prompts) await sendDirect(sims.gap.url, p);
    assert.ok(await eventually(() => prompts.every((p) => held(p, sims.gap.url) === fullBlocks)));
    const stats = producer.cache.events!.stats();
    assert.ok(stats.gaps >= 1 && stats.replays >= 1, JSON.stringify(stats));
    assert.equal(stats.lost, 0);
    assert.equal(sims.gap.kvEvents!.stats().dropped, 1, "the sim skipped one batch live");
    assert.equal(await routedTo(prompts[1]!), keyOf(sims.gap.url));
  });

  it("joins a stream mid-way by replaying it from the start", async () => {
    assert.equal(held(joinPrompt, sims.join.url), 0, "nothing seen before the next live batch");
    await sendDirect(sims.join.url, promptOfTokens(PROMPT_TOKENS, "jlat"));
    assert.ok(await eventually(() => held(joinPrompt, sims.join.url) === fullBlocks));
    assert.equal(await routedTo(joinPrompt), keyOf(sims.join.url));
  });

  it("routes with each of llm-d's four precise-prefix configs, whatever their block size and hash seed", async () => {
    const pa = promptOfTokens(PROMPT_TOKENS, "aaaa");
    for (const [i, file] of PRECISE_CONFIGS.entries()) {
      const doc = parseYaml(readFileSync(join(LLM_D_CONFIGS, file), "utf8"));
      const spec = (doc.plugins as { type: string; parameters?: Record<string, unknown> }[]).find(
        (p) => p.type === "precise-prefix-cache-producer",
      )!;
      spec.parameters ??= {};
      spec.parameters.kvEventsConfig = {
        ...(spec.parameters.kvEventsConfig as object),
        podDiscoveryConfig: { socketPort: ports.socket, replaySocketPort: ports.replay },
      };
      const other = await routerFor([], stringifyYaml(doc), { endpoints: endpoints.slice(0, 2) });
      try {
        const otherProducer = other.config.plugins.get(
          "precise-prefix-cache-producer",
        ) as PrecisePrefixCacheProducer;
        const index = otherProducer.cache.index;
        const keys = index.requestKeys(defaultTokenizer.encode(pa), MODEL);
        // A live batch makes the new subscriber replay rank 0's stream from the start.
        let n = 0;
        assert.ok(
          await eventually(async () => {
            await sendDirect(sims.a.url, promptOfTokens(PROMPT_TOKENS, `c${i}-${n++}`));
            return index.match(keys, [keyOf(sims.a.url)], 0).blocks[0] === keys.length;
          }),
          file,
        );
        const res = await fetch(`${other.url}/v1/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: MODEL, prompt: pa, max_tokens: 1 }),
        });
        assert.equal(res.status, 200, file);
        await res.text();
        assert.equal(res.headers.get("x-llmd-endpoint"), keyOf(sims.a.url), file);
      } finally {
        await other.close();
      }
    }
  });

  it("a second router replica routes a prompt to where the first one placed it, from the events alone", async () => {
    const second = await routerFor([], routerConfig(ports.socket, ports.replay), { endpoints });
    try {
      const secondIndex = (
        second.config.plugins.get("precise-prefix-cache-producer") as PrecisePrefixCacheProducer
      ).cache.index;
      const secondClient = new OpenAI({ baseURL: `${second.url}/v1`, apiKey: "unused", maxRetries: 0 });
      const prompts = ["rep1", "rep2", "rep3"].map((tag) => promptOfTokens(PROMPT_TOKENS, tag));
      const placed: string[] = [];
      for (const p of prompts) placed.push(await routedTo(p));
      const keys = prompts.map((p) => secondIndex.requestKeys(defaultTokenizer.encode(p), MODEL));
      assert.ok(
        await eventually(() =>
          keys.every((k, i) => secondIndex.match(k, [placed[i]!], 0).blocks[0] === fullBlocks),
        ),
        "the second replica's index learns each placement from the engine's events",
      );
      for (const [i, p] of prompts.entries()) {
        const { response } = await secondClient.completions
          .create({ model: MODEL, prompt: p, max_tokens: 1 })
          .withResponse();
        assert.equal(response.headers.get("x-llmd-endpoint"), placed[i], `prompt ${i}`);
      }
    } finally {
      await second.close();
    }
  });

  it("clears a restarted publisher's blocks, and routes on while it is dead", async () => {
    // Ten batches, so the restarted publisher's first batch the router sees has a lower sequence.
    const old = Array.from({ length: 10 }, (_, i) => promptOfTokens(PROMPT_TOKENS, `old${i}`));
    for (const p of old) await sendDirect(restarting.url, p);
    assert.ok(await eventually(() => old.every((p) => held(p, restarting.url) === fullBlocks)));
    restarting.child.kill("SIGKILL");
    await exitOf(restarting.child);
    const pa = promptOfTokens(PROMPT_TOKENS, "aaaa");
    assert.equal(await routedTo(pa), keyOf(sims.a.url), "a dead publisher does not block routing");
    restarting = await spawnSim(restartArgs);
    const first = promptOfTokens(PROMPT_TOKENS, "new0");
    await sendDirect(restarting.url, first);
    // The SUB socket reconnects on its own; new batches until one arrives (the first may precede it).
    let i = 1;
    assert.ok(
      await eventually(async () => {
        await sendDirect(restarting.url, promptOfTokens(PROMPT_TOKENS, `new${i++}`));
        return producer.cache.events!.stats().restarts >= 1 && held(first, restarting.url) === fullBlocks;
      }, 10_000),
      "the restart is seen and the new stream replayed from 0",
    );
    assert.ok(i <= old.length, `seen within ${old.length} batches (${i})`);
    for (const p of old) assert.equal(held(p, restarting.url), 0, "the old engine's blocks are forgotten");
  });
});
