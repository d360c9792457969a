/**
 * `llmd sim --kv-events-config`: KV events over real ZeroMQ on loopback, read back with a SUB socket and
 * a replay DEALER as llm-d's subscriber reads them (shared/reference/llm-d.md §4.1), decoded with
 * @msgpack/msgpack.
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { decode } from "@msgpack/msgpack";
import { Dealer, Subscriber } from "zeromq";
import type { SimServer } from "../../src/sim/server.ts";
import { defaultTokenizer } from "../../src/tokenizer/tokenizer.ts";
import { completion, MODEL, promptOfTokens, startTestSim } from "./helpers.ts";

const BLOCK = 16;
const END_SEQ = 0xffff_ffff_ffff_ffffn;

/** One received message: the three frames, the sequence number and the decoded batch. */
interface Received {
  topic: string;
  seq: bigint;
  payload: Buffer;
  batch: [number, unknown[], number];
}

function kvConfig(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    enable_kv_cache_events: true,
    publisher: "zmq",
    endpoint: "tcp://127.0.0.1:*",
    replay_endpoint: "tcp://127.0.0.1:*",
    buffer_steps: 1000,
    ...extra,
  });
}

function decodeBatch(payload: Buffer): [number, unknown[], number] {
  return decode(payload, { useBigInt64: true }) as [number, unknown[], number];
}

/** A SUB socket collecting every message of one publisher. */
class Collector {
  readonly sub = new Subscriber({ linger: 0 });
  readonly messages: Received[] = [];
  private waiters: (() => void)[] = [];

  /** Connects to `endpoint`, or, with `bind`, binds it (llm-d's centralized mode: engines connect). */
  constructor(endpoint: string, bind = false) {
    if (bind) this.bound = this.sub.bind(endpoint).then(() => this.sub.lastEndpoint!);
    else this.sub.connect(endpoint);
    this.sub.subscribe("kv@");
    // Receiving while a bind is pending fails (the socket is busy), so the loop waits for it.
    void this.bound.then(() => this.loop());
  }

  /** The bound address (bind mode). */
  bound: Promise<string> = Promise.resolve("");

  private async loop(): Promise<void> {
    try {
      for await (const frames of this.sub) {
        assert.equal(frames.length, 3, "three frames per message");
        const [topic, seq, payload] = frames as [Buffer, Buffer, Buffer];
        assert.equal(seq.length, 8);
        this.messages.push({
          topic: topic.toString("utf8"),
          seq: seq.readBigUInt64BE(0),
          payload,
          batch: decodeBatch(payload),
        });
        for (const w of this.waiters.splice(0)) w();
      }
    } catch {
      // closed
    }
  }

  /** Waits until `predicate` holds over the messages so far (fails after `timeoutMs`). */
  async until(predicate: (m: Received[]) => boolean, timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.messages)) {
      const left = deadline - Date.now();
      assert.ok(left > 0, `timed out with ${this.messages.length} messages`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 50));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.sub.close();
  }
}

/**
 * Connects a collector and waits until it is subscribed: PUB drops what it sends before the
 * subscription arrives, so reset the (empty) prefix cache, which publishes AllBlocksCleared, until one
 * comes through.
 */
async function subscribe(sim: SimServer, c = new Collector(sim.kvEvents!.endpoint)): Promise<Collector> {
  const seen = c.messages.length;
  const deadline = Date.now() + 3000;
  while (c.messages.length === seen) {
    assert.ok(Date.now() < deadline, "the subscriber never received a batch");
    await resetPrefixCache(sim);
    await new Promise((r) => setTimeout(r, 20));
  }
  return c;
}

async function resetPrefixCache(sim: SimServer): Promise<boolean> {
  const res = await fetch(`${sim.url}/reset_prefix_cache`, { method: "POST" });
  assert.equal(res.status, 200);
  return ((await res.json()) as { reset: boolean }).reset;
}

async function complete(sim: SimServer, prompt: string, maxTokens = 1): Promise<void> {
  await completion(sim.url, { prompt, max_tokens: maxTokens });
}

/** Asks the replay socket for every kept batch from `start`; returns them and checks the sentinel. */
async function replay(endpoint: string, start: bigint): Promise<Received[]> {
  const dealer = new Dealer({ linger: 0, receiveTimeout: 3000 });
  dealer.connect(endpoint);
  const seq = Buffer.alloc(8);
  seq.writeBigUInt64BE(start);
  await dealer.send([Buffer.alloc(0), seq]);
  const out: Received[] = [];
  try {
    for (;;) {
      const frames = await dealer.receive();
      assert.equal(frames.length, 4, "empty delimiter, then [topic, seq, payload]");
      const [delimiter, topic, seqFrame, payload] = frames as [Buffer, Buffer, Buffer, Buffer];
      assert.equal(delimiter.length, 0);
      const n = seqFrame.readBigUInt64BE(0);
      if (payload.length === 0) {
        assert.equal(n, END_SEQ, "the sentinel's sequence is all ones");
        assert.equal(topic.length, 0, "the sentinel's topic is empty");
        return out;
      }
      out.push({ topic: topic.toString("utf8"), seq: n, payload, batch: decodeBatch(payload) });
    }
  } finally {
    dealer.close();
  }
}

type Wire = unknown[] | Record<string, unknown>;

/** vLLM's BlockStored field order, spelled out here so a wrong order in the publisher fails. */
const STORED_KEYS = [
  "block_hashes",
  "parent_block_hash",
  "token_ids",
  "block_size",
  "lora_id",
  "medium",
  "lora_name",
  "extra_keys",
  "group_idx",
  "kv_cache_spec_kind",
  "kv_cache_spec_sliding_window",
];

/** An event as `{type, …named fields}` whichever encoding it came in. */
function named(e: Wire): Record<string, unknown> {
  if (!Array.isArray(e)) return e;
  const [type, ...f] = e as [string, ...unknown[]];
  if (type === "BlockStored") {
    assert.equal(f.length, 11, "BlockStored carries all 11 fields");
    return Object.fromEntries([["type", type], ...STORED_KEYS.map((k, i) => [k, f[i]])]);
  }
  if (type === "BlockRemoved") return { type, block_hashes: f[0], medium: f[1], group_idx: f[2] };
  assert.equal(type, "AllBlocksCleared");
  assert.equal(f.length, 0);
  return { type };
}

function events(messages: Received[]): Record<string, unknown>[] {
  return messages.flatMap((m) => (m.batch[1] as Wire[]).map(named));
}

/** Token ids of the GPU BlockStored events, chained in order. */
function storedTokens(messages: Received[], medium = "GPU"): number[] {
  return events(messages)
    .filter((e) => e.type === "BlockStored" && e.medium === medium)
    .flatMap((e) => e.token_ids as number[]);
}

function assertConsecutive(messages: Received[]): void {
  for (let i = 1; i < messages.length; i++)
    assert.equal(messages[i]!.seq, messages[i - 1]!.seq + 1n, `seq ${i} follows ${i - 1}`);
}

describe("llmd sim KV events over ZeroMQ", () => {
  const open: { close(): unknown }[] = [];
  after(async () => {
    for (const o of open.reverse()) await o.close();
  });

  it("publishes BlockStored with the prompt's token ids in consecutive positional batches", async () => {
    const sim = await startTestSim({ "kv-events-config": kvConfig() });
    open.push(sim);
    const c = await subscribe(sim);
    open.push(c);
    const first = c.messages.length;
    const prompt = promptOfTokens(100, "p");
    await complete(sim, prompt);
    await c.until((m) => storedTokens(m.slice(first)).length >= 96);

    const all = c.messages;
    assertConsecutive(all);
    for (const m of all) {
      assert.equal(m.topic, `kv@127.0.0.1:${sim.port}@${MODEL}`);
      const [ts, evs, rank] = m.batch;
      assert.ok(Math.abs(ts - Date.now() / 1000) < 60, "ts is wall-clock seconds");
      assert.ok(Array.isArray(evs) && evs.length > 0);
      assert.equal(rank, 0);
      for (const e of evs) assert.ok(Array.isArray(e), "positional encoding by default");
    }
    const tokens = Array.from(defaultTokenizer.encode(prompt));
    assert.equal(tokens.length, 100);
    // Six whole 16-token blocks of the 100-token prompt; the partial seventh is never stored.
    assert.deepEqual(storedTokens(all.slice(first)), tokens.slice(0, 96));
    const stored = events(all.slice(first)).filter((e) => e.type === "BlockStored");
    assert.equal(stored[0]!.parent_block_hash, null, "the chain's first block has no parent");
    const hashes = stored.flatMap((e) => e.block_hashes as bigint[]);
    assert.equal(hashes.length, 6);
    for (const h of hashes) assert.equal(typeof h, "bigint", "hashes are msgpack uint64");
    for (const e of stored) {
      assert.equal(e.block_size, BLOCK);
      assert.equal(e.lora_id, null);
      assert.equal(e.lora_name, null);
      assert.equal(e.extra_keys, null);
      assert.equal((e.token_ids as number[]).length, (e.block_hashes as bigint[]).length * BLOCK);
    }
    // A second block's parent is the block before it.
    const byHash = stored.length > 1 ? stored[1]! : null;
    if (byHash) assert.equal(byHash.parent_block_hash, (stored[0]!.block_hashes as bigint[]).at(-1));

    // Resetting the now-populated cache publishes AllBlocksCleared.
    const before = c.messages.length;
    assert.equal(await resetPrefixCache(sim), true);
    await c.until((m) => m.length > before);
    assert.deepEqual(events(c.messages.slice(before)), [{ type: "AllBlocksCleared" }]);
    assertConsecutive(c.messages);

    // Replay from 0 resends everything published, the batches missed before subscribing included.
    const replayed = await replay(sim.kvEvents!.replayEndpoint!, 0n);
    const last = c.messages.at(-1)!.seq;
    assert.deepEqual(
      replayed.map((m) => m.seq),
      Array.from({ length: Number(last) + 1 }, (_, i) => BigInt(i)),
    );
    for (const m of c.messages) assert.deepEqual(replayed[Number(m.seq)]!.payload, m.payload);
    for (const m of replayed) assert.equal(m.topic, c.messages[0]!.topic);

    // Replay from the middle returns only the later batches.
    const mid = c.messages[first]!.seq + 1n;
    const tail = await replay(sim.kvEvents!.replayEndpoint!, mid);
    assert.deepEqual(
      tail.map((m) => m.seq),
      replayed.filter((m) => m.seq >= mid).map((m) => m.seq),
    );
    assert.ok(tail.length > 0 && tail.length < replayed.length);
    // Past the end: just the sentinel.
    assert.deepEqual(await replay(sim.kvEvents!.replayEndpoint!, last + 100n), []);
  });

  it("keeps only the last buffer_steps batches for replay", async () => {
    const sim = await startTestSim({ "kv-events-config": kvConfig({ buffer_steps: 3 }) });
    open.push(sim);
    const c = await subscribe(sim);
    open.push(c);
    for (let i = 0; i < 4; i++) await complete(sim, promptOfTokens(40, `b${i}`));
    await c.until((m) => storedTokens(m).length >= 4 * 32);
    const last = c.messages.at(-1)!.seq;
    const replayed = await replay(sim.kvEvents!.replayEndpoint!, 0n);
    assert.deepEqual(
      replayed.map((m) => m.seq),
      [last - 2n, last - 1n, last],
    );
  });

  it("encodes events as maps tagged under type with --kv-events-encoding map", async () => {
    const sim = await startTestSim({ "kv-events-config": kvConfig(), "kv-events-encoding": "map" });
    open.push(sim);
    const c = await subscribe(sim);
    open.push(c);
    const first = c.messages.length;
    const prompt = promptOfTokens(40, "m");
    await complete(sim, prompt);
    await c.until((m) => storedTokens(m.slice(first)).length >= 32);
    const evs = c.messages.flatMap((m) => m.batch[1]);
    for (const e of evs) assert.ok(!Array.isArray(e) && typeof e === "object");
    const stored = evs.find((e) => (e as { type: string }).type === "BlockStored") as Record<string, unknown>;
    assert.deepEqual(Object.keys(stored), ["type", ...STORED_KEYS]);
    assert.equal(stored.medium, "GPU");
    assert.deepEqual(
      storedTokens(c.messages.slice(first)),
      Array.from(defaultTokenizer.encode(prompt)).slice(0, 32),
    );
  });

  it("restarts the sequence at 0 when the simulator restarts (sims connecting to a bound SUB)", async () => {
    const c = new Collector("tcp://127.0.0.1:*", true);
    open.push(c);
    const endpoint = await c.bound;
    // A host that is not a wildcard is connected to, as engines do in llm-d's centralized mode.
    const a = await startTestSim({ "kv-events-config": kvConfig({ endpoint, replay_endpoint: null }) });
    await subscribe(a, c);
    await complete(a, promptOfTokens(40, "r"));
    for (let i = 0; i < 20; i++) await resetPrefixCache(a);
    await c.until((m) => m.at(-1)!.seq >= 20n);
    assertConsecutive(c.messages);
    const lastOfA = c.messages.at(-1)!.seq;
    await a.close();

    // A fresh simulator publishing to the same subscriber numbers from 0 again: the seq going back is
    // how llm-d's subscriber detects a restart. Its replay socket shows the first batch was 0.
    const b = await startTestSim({ "kv-events-config": kvConfig({ endpoint }) });
    open.push(b);
    assert.deepEqual(await replay(b.kvEvents!.replayEndpoint!, 0n), [], "nothing published yet");
    const seen = c.messages.length;
    await subscribe(b, c);
    assert.ok(c.messages[seen]!.seq < lastOfA, `seq went back (${c.messages[seen]!.seq} < ${lastOfA})`);
    assertConsecutive(c.messages.slice(seen));
    const fresh = await replay(b.kvEvents!.replayEndpoint!, 0n);
    assert.equal(fresh[0]!.seq, 0n);
    assertConsecutive(fresh);
    assert.equal(fresh.at(-1)!.seq, c.messages.at(-1)!.seq);
  });

  it("offloads evicted GPU blocks to CPU: BlockRemoved GPU then BlockStored CPU with the same tokens", async () => {
    const sim = await startTestSim({
      "kv-events-config": kvConfig(),
      "kv-cache-size": 16,
      "cpu-offload-gb": 1,
    });
    open.push(sim);
    const c = await subscribe(sim);
    open.push(c);
    const first = c.messages.length;
    // Four 8-block prompts through a 16-block GPU cache: later ones evict earlier ones' blocks.
    const prompts = [0, 1, 2, 3].map((i) => promptOfTokens(8 * BLOCK + 1, `o${i}`));
    for (const p of prompts) await complete(sim, p);
    await c.until((m) => storedTokens(m.slice(first), "CPU").length >= 8 * BLOCK);
    const evs = events(c.messages.slice(first));
    const removedGpu = new Set(
      evs
        .filter((e) => e.type === "BlockRemoved" && e.medium === "GPU")
        .flatMap((e) => e.block_hashes as bigint[]),
    );
    const storedGpu = new Map<bigint, number[]>();
    for (const e of evs.filter((x) => x.type === "BlockStored" && x.medium === "GPU")) {
      const hs = e.block_hashes as bigint[];
      for (const [i, h] of hs.entries())
        storedGpu.set(h, (e.token_ids as number[]).slice(i * BLOCK, (i + 1) * BLOCK));
    }
    const cpu = evs.filter((e) => e.type === "BlockStored" && e.medium === "CPU");
    assert.ok(cpu.length >= 8);
    for (const e of cpu) {
      const [h] = e.block_hashes as bigint[];
      assert.ok(removedGpu.has(h!), "a block reaches CPU only after leaving the GPU");
      assert.deepEqual(e.token_ids, storedGpu.get(h!), "the CPU copy carries the block's tokens");
    }
    // The first prompt's first block went GPU → CPU.
    const firstBlock = Array.from(defaultTokenizer.encode(prompts[0]!)).slice(0, BLOCK);
    assert.ok(cpu.some((e) => JSON.stringify(e.token_ids) === JSON.stringify(firstBlock)));
  });

  it("refuses unknown kv-events-config keys and is off unless enabled", async () => {
    const { parseSimConfig } = await import("../../src/sim/config.ts");
    const bad = parseSimConfig({ model: "m", "kv-events-config": '{"enable_kv_cache_events":true,"hmw":1}' });
    assert.equal(bad.ok, false);
    assert.match(bad.ok ? "" : bad.error, /kv-events-config: unknown key "hmw"/);
    const off = await startTestSim({ "kv-events-config": '{"publisher":"zmq"}' });
    open.push(off);
    assert.equal(off.kvEvents, null);
  });

  it("resolves vLLM's topic placeholders and defaults to kv@<host>:<port>@<model>", async () => {
    const { resolveTopic } = await import("../../src/sim/kv-events-config.ts");
    const vars = { host: "127.0.0.1", port: 8001, model: "m" };
    assert.equal(resolveTopic("", vars, {}), "kv@127.0.0.1:8001@m");
    assert.equal(resolveTopic("", vars, { POD_IP: "10.0.0.5" }), "kv@10.0.0.5:8001@m");
    // biome-ignore-start lint/suspicious/noTemplateCurlyInString: vLLM's placeholders are literal text
    assert.equal(
      resolveTopic("kv@${POD_IP}:${PORT}@${MODEL}/${ZONE}/${UNSET}", vars, {
        POD_IP: "10.0.0.5",
        ZONE: "z1",
      }),
      "kv@10.0.0.5:8001@m/z1/${UNSET}",
    );
    // biome-ignore-end lint/suspicious/noTemplateCurlyInString: vLLM's placeholders are literal text
  });
});
