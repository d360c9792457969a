import assert from "node:assert/strict";
import { test } from "node:test";
import { ConversationIds } from "../tokenizer/conversation-ids.ts";
import { type IndexKvEvent, PreciseIndex, type PreciseIndexOptions } from "./precise-index.ts";
import { foldKey, RequestKeyHasher } from "./request-keys.ts";

const MODEL = "m";
const tokensOf = (n: number, salt = 0) =>
  Array.from({ length: n }, (_, i) => (i * 7919 + salt * 104729) % 50_000);

function index(options: Partial<PreciseIndexOptions> = {}): PreciseIndex {
  return new PreciseIndex({ blockSizeTokens: 16, maxBytes: 1 << 30, speculativeTtlMs: 2000, ...options });
}

/** One BlockStored per engine block of `tokens`, chained, with engine hashes `base + i` (any seed of the engine's own). */
function stored(
  tokens: number[],
  blockSize: number,
  base: bigint,
  medium = "GPU",
  perEvent = 1,
): IndexKvEvent[] {
  const events: IndexKvEvent[] = [];
  const blocks = Math.floor(tokens.length / blockSize);
  for (let b = 0; b < blocks; b += perEvent) {
    const count = Math.min(perEvent, blocks - b);
    events.push({
      type: "BlockStored",
      blockHashes: Array.from({ length: count }, (_, i) => base + BigInt(b + i)),
      parentBlockHash: b === 0 ? null : base + BigInt(b - 1),
      tokenIds: tokens.slice(b * blockSize, (b + count) * blockSize),
      blockSize,
      lora: null,
      medium,
    });
  }
  return events;
}

const matchOf = (idx: PreciseIndex, tokens: number[], pods: string[], now = 0) =>
  idx.match(idx.requestKeys(tokens, MODEL), pods, now);

/** FNV-64a over canonical CBOR with BigInt: an independent reference for the 32-bit-halves hasher. */
function referenceKey(parent: bigint, tokens: number[] | null, extra: string | null): bigint {
  const bytes: number[] = [0x83];
  const head = (major: number, v: bigint) => {
    const m = major << 5;
    if (v < 24n) bytes.push(m | Number(v));
    else {
      const [info, len] =
        v < 0x100n ? [24, 1] : v < 0x10000n ? [25, 2] : v < 0x100000000n ? [26, 4] : [27, 8];
      bytes.push(m | info);
      for (let i = len - 1; i >= 0; i--) bytes.push(Number((v >> BigInt(8 * i)) & 0xffn));
    }
  };
  head(0, parent);
  if (tokens === null) bytes.push(0xf6);
  else {
    head(4, BigInt(tokens.length));
    for (const t of tokens) head(0, BigInt(t));
  }
  if (extra === null) bytes.push(0xf6);
  else {
    const utf8 = new TextEncoder().encode(extra);
    head(3, BigInt(utf8.length));
    bytes.push(...utf8);
  }
  return fnv64a(bytes);
}

function fnv64a(bytes: Iterable<number>): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = BigInt.asUintN(64, (h ^ BigInt(b)) * 0x100000001b3n);
  return h;
}

test("request keys are FNV-64a over canonical CBOR, chained from [FNV(seed), null, model]", () => {
  const hasher = new RequestKeyHasher(4, "42");
  const root = referenceKey(fnv64a(new TextEncoder().encode("42")), null, "my-model");
  const block0 = [1, 300, 70_000, 5_000_000];
  const k0 = referenceKey(root, block0, null);
  const k1 = referenceKey(k0, [23, 24, 255, 256], null);
  const fold = (k: bigint) => foldKey(Number(k >> 32n), Number(k & 0xffffffffn));
  assert.deepEqual([...hasher.keys([...block0, 23, 24, 255, 256, 9], "my-model")], [fold(k0), fold(k1)]);
  assert.notDeepEqual(
    [...new RequestKeyHasher(4, "").keys(block0, "my-model")],
    [fold(k0)],
    "the seed matters",
  );
});

test("engine hashes are opaque: the index matches the router's keys from the events' tokens", () => {
  const idx = index();
  const tokens = tokensOf(16 * 10);
  idx.apply(stored(tokens, 16, 0xdead_beefn), "a", MODEL, 0);
  idx.apply(stored(tokens.slice(0, 16 * 4), 16, 77n, "GPU", 4), "b", MODEL, 0);
  const m = matchOf(idx, [...tokens, 1, 2, 3], ["a", "b", "c"]);
  assert.deepEqual([...m.blocks], [10, 4, 0]);
  assert.deepEqual([...m.weighted], [10, 4, 0]);
  assert.deepEqual([...matchOf(idx, tokensOf(160, 1), ["a"]).blocks], [0], "other tokens");
  assert.deepEqual([...idx.match(idx.requestKeys(tokens, "other"), ["a"], 0).blocks], [0], "other model");
});

test("engine blocks smaller than request blocks carry their tail; larger ones complete several", () => {
  const tokens = tokensOf(64 * 5);
  const small = index({ blockSizeTokens: 64 });
  small.apply(stored(tokens, 16, 1000n), "a", MODEL, 0); // one event per 16-token engine block
  assert.deepEqual([...matchOf(small, tokens, ["a"]).blocks], [5]);
  const large = index({ blockSizeTokens: 16 });
  large.apply(stored(tokens, 64, 2000n), "a", MODEL, 0);
  assert.deepEqual([...matchOf(large, tokens, ["a"]).blocks], [20]);
  const odd = index({ blockSizeTokens: 5 }); // sim-epp-no-hit-lru.yaml's blockSizeTokens
  odd.apply(stored(tokens, 16, 3000n, "GPU", 3), "a", MODEL, 0);
  assert.deepEqual([...matchOf(odd, tokens, ["a"]).blocks], [64]);
});

test("BlockRemoved evicts the request blocks an engine block completes; AllBlocksCleared clears the pod", () => {
  const idx = index({ blockSizeTokens: 32 });
  const tokens = tokensOf(16 * 8);
  idx.apply(stored(tokens, 16, 0n), "a", MODEL, 0);
  idx.apply(stored(tokens, 16, 500n), "b", MODEL, 0);
  idx.apply([{ type: "BlockRemoved", blockHashes: [5n], medium: "GPU" }], "a", MODEL, 0); // ends request block 2
  assert.deepEqual([...matchOf(idx, tokens, ["a", "b"]).blocks], [2, 4]);
  idx.apply([{ type: "BlockRemoved", blockHashes: [1n], medium: "GPU" }], "a", MODEL, 0);
  assert.deepEqual([...matchOf(idx, tokens, ["a"]).blocks], [0]);
  idx.apply([{ type: "AllBlocksCleared" }], "b", MODEL, 0);
  assert.deepEqual([...matchOf(idx, tokens, ["a", "b"]).blocks], [0, 0]);
  const stats = idx.stats();
  assert.equal(stats.holders, 2, "a keeps request blocks 2 and 3");
  assert.equal(stats.removedBlocks, 2);
});

test("a stored block whose parent is unknown is dropped, not guessed", () => {
  const idx = index();
  const events = stored(tokensOf(64), 16, 0n);
  idx.apply(events.slice(1), "a", MODEL, 0);
  assert.equal(idx.stats().orphanBlocks, 3);
  assert.equal(idx.stats().keys, 0);
});

test("tiers: a block offloaded to CPU and dropped from GPU still matches, at the CPU weight", () => {
  const idx = index({
    tiers: [
      { name: "gpu", weight: 1 },
      { name: "cpu", weight: 0.5 },
    ],
  });
  const tokens = tokensOf(16 * 4);
  idx.apply(stored(tokens, 16, 0n), "a", MODEL, 0);
  idx.apply(stored(tokens.slice(0, 32), 16, 0n, "CPU"), "a", MODEL, 0);
  idx.apply([{ type: "BlockRemoved", blockHashes: [0n, 1n], medium: "GPU" }], "a", MODEL, 0);
  const m = matchOf(idx, tokens, ["a"]);
  assert.deepEqual([...m.blocks], [4]);
  assert.equal(m.weighted[0], 0.5 + 0.5 + 1 + 1);
  idx.apply([{ type: "BlockRemoved", blockHashes: [0n], medium: "CPU" }], "a", MODEL, 0);
  assert.deepEqual([...matchOf(idx, tokens, ["a"]).blocks], [0]);
  idx.apply(stored(tokens, 16, 100n, "DISK"), "b", MODEL, 0); // unlisted: the lowest listed weight
  assert.equal(matchOf(idx, tokens, ["b"]).weighted[0], 2);
});

test("speculative entries count until their TTL, and an event confirms them", () => {
  const idx = index({ speculativeTtlMs: 2000 });
  const tokens = tokensOf(16 * 6);
  idx.insertSpeculative(tokens, MODEL, "a", 1000);
  assert.deepEqual([...matchOf(idx, tokens, ["a"], 2999).blocks], [6]);
  assert.deepEqual([...matchOf(idx, tokens, ["a"], 3000).blocks], [0]);
  idx.insertSpeculative(tokens, MODEL, "a", 4000);
  idx.apply(stored(tokens.slice(0, 48), 16, 0n), "a", MODEL, 4500); // confirms 3 of 6
  idx.apply([], "a", MODEL, 7000); // sweeps the expired rest
  assert.deepEqual([...matchOf(idx, tokens, ["a"], 7000).blocks], [3]);
  assert.equal(idx.stats().holders, 3);
  idx.insertSpeculative(tokensOf(64, 5), MODEL, "a", 7000);
  assert.equal(idx.stats().holders, 7);
  idx.clearPod("a");
  assert.deepEqual(
    [idx.stats().holders, idx.stats().keys, idx.stats().bytes],
    [0, 0, 0],
    "speculative ones too",
  );
});

test("a prompt marked again keeps one expiry entry per block, which moves on to the latest TTL", () => {
  const idx = index({ speculativeTtlMs: 2000 });
  const tokens = tokensOf(16 * 6);
  for (let turn = 0; turn < 5; turn++) idx.insertSpeculative(tokens, MODEL, "a", 1000 + turn * 500);
  assert.equal(idx.stats().speculativeQueue, 6, "not 5 × 6");
  idx.apply([], "a", MODEL, 3500); // the first marks' time: re-queued, not expired
  assert.deepEqual([...matchOf(idx, tokens, ["a"], 3500).blocks], [6]);
  assert.equal(idx.stats().speculativeQueue, 6);
  idx.apply([], "a", MODEL, 5000); // the last mark (3000) + 2000
  assert.deepEqual([...matchOf(idx, tokens, ["a"], 5000).blocks], [0]);
  assert.deepEqual([idx.stats().speculativeQueue, idx.stats().holders], [0, 0]);
});

test("the byte budget forgets the least recently stored blocks, and the estimate stays within it", () => {
  const idx = index({ maxBytes: 20_000 });
  for (let p = 0; p < 20; p++) idx.apply(stored(tokensOf(16 * 10, p), 16, BigInt(p * 100)), "a", MODEL, 0);
  const stats = idx.stats();
  assert.ok(stats.bytes <= 20_000, `${stats.bytes} bytes`);
  assert.ok(stats.evictedBlocks > 0);
  assert.deepEqual([...matchOf(idx, tokensOf(160, 19), ["a"]).blocks], [10], "the newest prompt is whole");
  assert.deepEqual([...matchOf(idx, tokensOf(160, 0), ["a"]).blocks], [0], "the oldest is gone");
  idx.clearPod("a");
  assert.deepEqual(
    { ...idx.stats(), evictedBlocks: 0, storedBlocks: 0 },
    {
      keys: 0,
      holders: 0,
      engineBlocks: 0,
      bytes: 0,
      storedBlocks: 0,
      removedBlocks: 0,
      orphanBlocks: 0,
      evictedBlocks: 0,
      speculativeQueue: 0,
    },
  );
});

test("keys the index derived from events equal freshly computed ones, also where a prompt diverges or the model differs", () => {
  const idx = index({ blockSizeTokens: 32 });
  const a = tokensOf(16 * 8);
  const b = [...a.slice(0, 16 * 5), ...tokensOf(16 * 3, 9)];
  idx.apply(stored(a, 16, 0n), "p", MODEL, 0); // engine blocks half a request block: keys via tails
  const fresh = (t: number[], model = MODEL, n = Number.POSITIVE_INFINITY) => [
    ...new RequestKeyHasher(32).keys(t, model, n),
  ];
  assert.deepEqual([...idx.requestKeys(a, MODEL)], fresh(a));
  assert.deepEqual([...idx.requestKeys(b, MODEL)], fresh(b));
  assert.deepEqual([...idx.requestKeys(a, "other")], fresh(a, "other"));
  assert.deepEqual([...idx.requestKeys(a, MODEL, 3)], fresh(a, MODEL, 3));
  idx.apply(stored(a, 16, 100n), "q", MODEL, 0); // a second pod's copy derives its keys too
  assert.deepEqual([...matchOf(idx, a, ["p", "q"]).blocks], [4, 4]);
  idx.clearPod("p");
  idx.clearPod("q");
  assert.deepEqual([idx.stats().keys, idx.stats().bytes], [0, 0]);
  assert.deepEqual([...idx.requestKeys(b, MODEL)], fresh(b), "forgotten keys are computed again");
  idx.apply(stored(b, 16, 200n), "p", MODEL, 0); // into the tail runs the cleared blocks freed
  assert.deepEqual([...matchOf(idx, b, ["p"]).blocks], [4]);
});

test("matchTokens computes keys only as far as a match reaches, and matches as match(requestKeys)", () => {
  const idx = index();
  const tokens = tokensOf(16 * 20);
  assert.equal(idx.matchTokens(tokens, MODEL, ["a"], 0).keys.length, 0, "no pod known");
  idx.apply(stored(tokens.slice(0, 16 * 6), 16, 0n), "a", MODEL, 0);
  idx.apply(stored(tokens.slice(0, 16 * 9), 16, 50n, "CPU"), "b", MODEL, 0);
  const m = idx.matchTokens(tokens, MODEL, ["a", "b", "c"], 0);
  assert.deepEqual([...m.keys], [...new RequestKeyHasher(16).keys(tokens, MODEL, 10)]);
  const full = matchOf(idx, tokens, ["a", "b", "c"]);
  assert.deepEqual([[...m.blocks], [...m.weighted]], [[...full.blocks], [...full.weighted]]);
  assert.deepEqual([...m.blocks], [6, 9, 0]);
});

test("requestKeys of prompts no event reported are computed fresh, whatever was asked before", () => {
  const idx = index();
  const a = tokensOf(16 * 8);
  const b = [...a.slice(0, 16 * 5), ...tokensOf(16 * 3, 9)];
  idx.requestKeys(a, MODEL);
  assert.deepEqual([...idx.requestKeys(b, MODEL)], [...new RequestKeyHasher(16).keys(b, MODEL)]);
  assert.deepEqual([...idx.requestKeys(a, "other")], [...new RequestKeyHasher(16).keys(a, "other")]);
  assert.deepEqual([...idx.requestKeys(a, MODEL, 3)], [...new RequestKeyHasher(16).keys(a, MODEL, 3)]);
});

test("random events, decisions and budget evictions: matches agree with fresh keys, and clearing every pod frees everything", () => {
  let seed = 12345;
  const random = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  for (const blockSizeTokens of [16, 32, 8]) {
    const idx = index({ blockSizeTokens, maxBytes: 60_000, speculativeTtlMs: 50 });
    const pods = ["a", "b", "c"];
    const prompts = Array.from({ length: 6 }, (_, p) => tokensOf(16 * 12, p % 4));
    for (let step = 0; step < 400; step++) {
      const pod = pods[random(3)]!;
      const prompt = prompts[random(prompts.length)]!;
      const blocks = 1 + random(12);
      const base = BigInt(random(8) * 1000);
      const op = random(10);
      if (op < 5)
        idx.apply(
          stored(prompt.slice(0, 16 * blocks), 16, base, random(2) ? "GPU" : "CPU", 1 + random(4)),
          pod,
          MODEL,
          step,
        );
      else if (op < 8)
        idx.apply(
          [
            {
              type: "BlockRemoved",
              blockHashes: [base + BigInt(random(12))],
              medium: random(2) ? "GPU" : "CPU",
            },
          ],
          pod,
          MODEL,
          step,
        );
      else if (op < 9) idx.insertSpeculative(prompt.slice(0, 16 * blocks), MODEL, pod, step);
      else idx.apply([{ type: "AllBlocksCleared" }], pod, MODEL, step);
      const fresh = new RequestKeyHasher(blockSizeTokens).keys(prompt, MODEL);
      assert.deepEqual([...idx.requestKeys(prompt, MODEL)], [...fresh]);
      const byTokens = idx.matchTokens(prompt, MODEL, pods, step);
      const byKeys = idx.match(fresh, pods, step);
      assert.deepEqual(
        [[...byTokens.blocks], [...byTokens.weighted]],
        [[...byKeys.blocks], [...byKeys.weighted]],
      );
      assert.ok(idx.stats().bytes <= 60_000 + 4096, `${idx.stats().bytes} bytes`);
    }
    for (const pod of pods) idx.clearPod(pod);
    const { keys, holders, engineBlocks, bytes } = idx.stats();
    assert.deepEqual(
      { keys, holders, engineBlocks, bytes },
      { keys: 0, holders: 0, engineBlocks: 0, bytes: 0 },
    );
  }
});

/** The index's rules over plain objects: each holder an object, each engine block its whole token prefix. */
class ModelIndex {
  private readonly engines = new Map<
    string,
    Map<bigint, { tiers: number; prefix: number[]; owned: ModelHolder[] }>
  >();
  private readonly holders = new Map<string, ModelHolder>();
  private readonly queue: [ModelHolder, number][] = [];
  private readonly tierBits = new Map([
    ["GPU", 1],
    ["CPU", 2],
  ]);

  constructor(
    private readonly hasher: RequestKeyHasher,
    private readonly ttl: number,
  ) {}

  apply(event: IndexKvEvent, pod: string, now: number): void {
    this.sweep(now);
    const engine = this.engines.get(pod) ?? new Map();
    this.engines.set(pod, engine);
    if (event.type === "AllBlocksCleared") {
      for (const block of engine.values()) for (const h of block.owned) this.clearTier(h, block.tiers);
      for (const h of this.holders.values()) if (h.pod === pod) this.remove(h);
      this.engines.delete(pod);
      return;
    }
    const tier = this.tierBits.get(event.medium ?? "GPU")!;
    if (event.type === "BlockRemoved") {
      for (const hash of event.blockHashes) {
        const block = engine.get(hash);
        if (!block) continue;
        block.tiers &= ~tier;
        for (const h of block.owned) this.clearTier(h, tier);
        if (block.tiers === 0) engine.delete(hash);
      }
      return;
    }
    let prefix: number[] = [];
    if (event.parentBlockHash !== null) {
      const parent = engine.get(event.parentBlockHash);
      if (!parent) return;
      prefix = parent.prefix;
    }
    const size = this.hasher.blockSizeTokens;
    event.blockHashes.forEach((hash, i) => {
      const known = engine.get(hash);
      if (known) {
        known.tiers |= tier;
        for (const h of known.owned) if (h.alive) [h.tiers, h.spec] = [h.tiers | tier, 0];
        prefix = known.prefix;
        return;
      }
      const next = [
        ...prefix,
        ...Array.from(event.tokenIds).slice(i * event.blockSize, (i + 1) * event.blockSize),
      ];
      const keys = this.hasher.keys(next, MODEL);
      const owned = [...keys.slice(Math.floor(prefix.length / size))].map((key) => this.holder(key, pod));
      for (const h of owned) [h.tiers, h.spec] = [h.tiers | tier, 0];
      engine.set(hash, { tiers: tier, prefix: next, owned });
      prefix = next;
    });
  }

  speculative(keys: Float64Array, pod: string, now: number): void {
    this.sweep(now);
    for (const key of keys) {
      const h = this.holder(key, pod);
      if (h.tiers !== 0) continue;
      h.spec = now + this.ttl;
      this.queue.push([h, h.spec]);
    }
  }

  match(keys: Float64Array, pods: string[], now: number): { blocks: number[]; weighted: number[] } {
    const weights = [0, 1, 0.8, 1];
    const blocks: number[] = [];
    const weighted: number[] = [];
    for (const pod of pods) {
      let [n, w] = [0, 0];
      for (const key of keys) {
        const h = this.holders.get(`${key}|${pod}`);
        const weight = !h ? -1 : h.tiers !== 0 ? weights[h.tiers]! : h.spec > now ? 1 : -1;
        if (weight < 0) break;
        [n, w] = [n + 1, w + weight];
      }
      blocks.push(n);
      weighted.push(w);
    }
    return { blocks, weighted };
  }

  private sweep(now: number): void {
    while (this.queue.length > 0 && this.queue[0]![1] <= now) {
      const [h, until] = this.queue.shift()!;
      if (h.spec !== until) continue;
      h.spec = 0;
      if (h.alive && h.tiers === 0) this.remove(h);
    }
  }

  private holder(key: number, pod: string): ModelHolder {
    const id = `${key}|${pod}`;
    let h = this.holders.get(id);
    if (!h) this.holders.set(id, (h = { id, pod, tiers: 0, spec: 0, alive: true }));
    return h;
  }

  private clearTier(h: ModelHolder, tier: number): void {
    if (!h.alive) return;
    h.tiers &= ~tier;
    if (h.tiers === 0 && h.spec === 0) this.remove(h);
  }

  private remove(h: ModelHolder): void {
    h.alive = false;
    this.holders.delete(h.id);
  }
}

interface ModelHolder {
  id: string;
  pod: string;
  tiers: number;
  spec: number;
  alive: boolean;
}

test("random events and decisions: the index matches what the rules on plain objects give", () => {
  let seed = 777;
  const random = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  for (const blockSizeTokens of [16, 32, 8, 48]) {
    const idx = index({ blockSizeTokens, speculativeTtlMs: 30 });
    const model = new ModelIndex(new RequestKeyHasher(blockSizeTokens), 30);
    const pods = ["a", "b", "c"];
    const prompts = Array.from({ length: 5 }, (_, p) => tokensOf(16 * 12, p % 3));
    for (let step = 0; step < 600; step++) {
      const pod = pods[random(3)]!;
      const p = random(prompts.length);
      const prompt = prompts[p]!;
      const blocks = 1 + random(12);
      const base = BigInt(p * 1000 + random(2) * 100);
      const op = random(10);
      const medium = random(3) ? "GPU" : "CPU";
      let events: IndexKvEvent[] = [];
      if (op < 5) {
        const from = random(blocks);
        events = stored(prompt.slice(0, 16 * blocks), 16, base, medium, 1 + random(4)).slice(
          from > 0 ? 1 : 0,
        );
      } else if (op < 8)
        events = [{ type: "BlockRemoved", blockHashes: [base + BigInt(random(12))], medium }];
      else if (op < 9) {
        const part = prompt.slice(0, 16 * blocks);
        idx.insertSpeculative(part, MODEL, pod, step);
        model.speculative(new RequestKeyHasher(blockSizeTokens).keys(part, MODEL), pod, step);
      } else events = [{ type: "AllBlocksCleared" }];
      for (const event of events) {
        idx.apply([event], pod, MODEL, step);
        model.apply(event, pod, step);
      }
      const keys = new RequestKeyHasher(blockSizeTokens).keys(prompt, MODEL);
      const got = idx.matchTokens(prompt, MODEL, pods, step);
      const want = model.match(keys, pods, step);
      assert.deepEqual(
        { blocks: [...got.blocks], weighted: [...got.weighted].map((w) => +w.toFixed(6)) },
        { blocks: want.blocks, weighted: want.weighted.map((w) => +w.toFixed(6)) },
        `block size ${blockSizeTokens}, step ${step}`,
      );
      assert.deepEqual([...idx.requestKeys(prompt, MODEL)], [...keys]);
    }
  }
});

test("a long prompt's speculative entries are keyed a slice at a time, leading blocks first, by later index calls", () => {
  const idx = index({ blockSizeTokens: 64, speculativeTtlMs: 1000 });
  const tokens = tokensOf(64 * 600); // 600 blocks; a slice is 16,384 tokens = 256 blocks
  idx.insertSpeculative(tokens, MODEL, "a", 0);
  assert.equal(idx.pendingSpeculativeBlocks, 600 - 256);
  assert.deepEqual([...idx.match(idx.requestKeys(tokens, MODEL), ["a"], 1).blocks], [256]);
  idx.apply([], "b", MODEL, 2); // an event batch keys the next slice
  assert.deepEqual([...idx.match(idx.requestKeys(tokens, MODEL), ["a"], 3).blocks], [512]);
  assert.deepEqual([...idx.matchTokens(tokens, MODEL, ["a"], 3).blocks], [600], "and so does a decision");
  assert.equal(idx.pendingSpeculativeBlocks, 0);
  idx.insertSpeculative(tokens.slice(0, 64 * 1000), MODEL, "c", 10);
  idx.apply([], "b", MODEL, 1010); // past the TTL: the rest is never keyed
  assert.equal(idx.pendingSpeculativeBlocks, 0);
  assert.deepEqual([...idx.matchTokens(tokens, MODEL, ["a", "c"], 1010).blocks], [0, 0]);
  idx.insertSpeculative(tokens, MODEL, "d", 2000);
  idx.clearPod("d");
  assert.equal(idx.pendingSpeculativeBlocks, 0, "a pod cleared drops its pending entries");
  idx.insertSpeculative(tokens, MODEL, "e", 3000, idx.requestKeys(tokens, MODEL));
  assert.equal(idx.pendingSpeculativeBlocks, 0, "all keys given: marked at once");
  assert.deepEqual([...idx.match(idx.requestKeys(tokens, MODEL), ["e"], 3001).blocks], [600]);
});

test("a conversation's pending entries whose keys its array already keeps are marked by lookup, many blocks a slice", () => {
  const idx = index({ blockSizeTokens: 64, speculativeTtlMs: 1000 });
  const conversation = new ConversationIds(64 * 1200);
  conversation.append(0, [Uint32Array.from(tokensOf(64 * 1200))]);
  const tokens = conversation.view(64 * 1200); // 1,200 blocks
  idx.insertSpeculative(tokens, MODEL, "a", 0);
  idx.insertSpeculative(tokens, MODEL, "b", 0); // queued behind a's, over the same blocks
  let calls = 0;
  for (; idx.pendingSpeculativeBlocks > 0; calls++) idx.apply([], "x", MODEL, 1);
  // Two slices went to the insertions. Hashing a's 1,200 blocks takes 4.7 slices; b's 944 left
  // would take 3.7 more if hashed, and take 0.5 as lookups of the keys a's left with the array.
  assert.equal(calls, 4);
  const match = idx.matchTokens(tokens, MODEL, ["a", "b"], 2);
  assert.deepEqual([...match.blocks], [1200, 1200]);
  assert.deepEqual([...match.keys], [...idx.requestKeys(tokens, MODEL)]);
});

test("room reserved mid-stream keeps what the index holds, speculative entries and their expiry", () => {
  const build = (reserveAt: number) => {
    const idx = index({ speculativeTtlMs: 100 });
    for (let step = 0; step < 6; step++) {
      if (step === reserveAt) idx.reserve(5_000);
      idx.apply(stored(tokensOf(16 * 40, step), 16, BigInt(step) << 20n), "a", MODEL, step);
      idx.insertSpeculative(tokensOf(16 * 30, 10 + step), MODEL, "b", step * 40);
    }
    return idx;
  };
  const plain = build(-1);
  const reserved = build(4); // after the first entries expired: the queue does not start at its columns' start
  const prompts = [0, 1, 2, 3, 4, 5].flatMap((s) => [tokensOf(16 * 40, s), tokensOf(16 * 30, 10 + s)]);
  const probe = (idx: PreciseIndex, now: number) =>
    prompts.map((tokens) => [...matchOf(idx, tokens, ["a", "b"], now).blocks]);
  assert.deepEqual(reserved.stats(), plain.stats());
  assert.deepEqual(probe(reserved, 200), probe(plain, 200));
  reserved.apply([], "a", MODEL, 1_000); // past every speculative entry's TTL
  plain.apply([], "a", MODEL, 1_000);
  assert.deepEqual(reserved.stats(), plain.stats());
  assert.equal(reserved.stats().speculativeQueue, 0);
});
