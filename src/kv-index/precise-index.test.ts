import assert from "node:assert/strict";
import { test } from "node:test";
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
  const keys = idx.requestKeys(tokens, MODEL);
  idx.insertSpeculative(keys, "a", 1000);
  assert.deepEqual([...matchOf(idx, tokens, ["a"], 2999).blocks], [6]);
  assert.deepEqual([...matchOf(idx, tokens, ["a"], 3000).blocks], [0]);
  idx.insertSpeculative(keys, "a", 4000);
  idx.apply(stored(tokens.slice(0, 48), 16, 0n), "a", MODEL, 4500); // confirms 3 of 6
  idx.apply([], "a", MODEL, 7000); // sweeps the expired rest
  assert.deepEqual([...matchOf(idx, tokens, ["a"], 7000).blocks], [3]);
  assert.equal(idx.stats().holders, 3);
  idx.insertSpeculative(idx.requestKeys(tokensOf(64, 5), MODEL), "a", 7000);
  assert.equal(idx.stats().holders, 7);
  idx.clearPod("a");
  assert.deepEqual(
    [idx.stats().holders, idx.stats().keys, idx.stats().bytes],
    [0, 0, 0],
    "speculative ones too",
  );
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
