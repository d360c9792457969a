import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runUntilIdle } from "./drive.ts";
import { createEngine, type KvEvent, type KvTier } from "./index.ts";
import { concatTokens, syntheticTokens } from "./test-prompts.ts";

/** Replays events into per-tier sets, failing on a removal of something not stored. */
function replay(events: KvEvent[], live: Map<KvTier, Set<bigint>>): void {
  for (const e of events) {
    if (e.type === "AllBlocksCleared") {
      for (const set of live.values()) set.clear();
      continue;
    }
    const set = live.get(e.medium) ?? new Set<bigint>();
    live.set(e.medium, set);
    for (const h of e.blockHashes) {
      if (e.type === "BlockStored") set.add(h);
      else assert.ok(set.delete(h), `BlockRemoved ${h} on ${e.medium} was never stored there`);
    }
  }
}

describe("KV events", () => {
  it("stored and removed sequences are consistent per tier", () => {
    const engine = createEngine({
      kvCacheSize: 96,
      blockSize: 16,
      cpuOffloadGb: (40 * 131072 * 16) / 1e9,
      storageOffloadGb: 1,
    });
    const live = new Map<KvTier, Set<bigint>>();
    const stored: Extract<KvEvent, { type: "BlockStored" }>[] = [];
    engine.onKvEvent((events) => {
      replay(events, live);
      for (const e of events) if (e.type === "BlockStored") stored.push(e);
    });
    const shared = syntheticTokens(320, 99);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 6; i++) {
        const p = concatTokens(shared, syntheticTokens(200 + i * 30, round * 10 + (i % 3)));
        engine.add({ id: `r${round}-${i}`, promptTokens: p, maxTokens: 20 }, 0);
      }
      runUntilIdle(engine);
    }
    const s = engine.stats();
    assert.ok(s.evictions > 0 && s.offloadHits > 0, "the workload must exercise eviction and reloads");
    assert.equal(live.get("GPU")!.size, s.cachedBlocks, "idle: every cached GPU block was announced");
    assert.equal(live.get("CPU")!.size, s.cpuBlocksHeld);
    assert.equal(live.get("DISK")?.size ?? 0, s.storageBlocksHeld);
    for (const e of stored) {
      assert.equal(e.tokenIds.length, e.blockHashes.length * e.blockSize);
      assert.equal(e.blockSize, 16);
    }
    assert.equal(stored[0]!.parentBlockHash, null, "the first block of a chain has no parent");
    assert.deepEqual(stored[0]!.tokenIds.slice(0, 16), Array.from(shared.subarray(0, 16)));
  });

  it("reset clears every tier with one AllBlocksCleared, only when no request holds blocks", () => {
    const engine = createEngine({ kvCacheSize: 64 });
    const events: KvEvent[] = [];
    engine.onKvEvent((batch) => events.push(...batch));
    engine.add({ id: "a", promptTokens: syntheticTokens(100, 1), maxTokens: 5 }, 0);
    engine.step(0);
    assert.equal(engine.resetPrefixCache(), false);
    runUntilIdle(engine);
    assert.ok(engine.stats().cachedBlocks > 0);
    assert.equal(engine.resetPrefixCache(), true);
    assert.equal(engine.stats().cachedBlocks, 0);
    assert.deepEqual(events.at(-1), { type: "AllBlocksCleared" });
  });

  it("does no event work and keeps no listener after unsubscribe", () => {
    const engine = createEngine({ kvCacheSize: 64 });
    let calls = 0;
    const off = engine.onKvEvent(() => calls++);
    off();
    engine.add({ id: "a", promptTokens: syntheticTokens(100, 1), maxTokens: 1 }, 0);
    runUntilIdle(engine);
    assert.equal(calls, 0);
  });
});
