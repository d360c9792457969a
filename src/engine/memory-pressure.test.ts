import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runUntilIdle } from "./drive.ts";
import { createEngine } from "./index.ts";
import { syntheticTokens } from "./test-prompts.ts";

describe("memory pressure", () => {
  it("evicts least recently used cached blocks and counts them", () => {
    const engine = createEngine({ kvCacheSize: 64, blockSize: 16 });
    const prompts = [1, 2, 3].map((seed) => syntheticTokens(400, seed)); // 25 blocks each
    for (const [i, p] of prompts.entries()) {
      engine.add({ id: `r${i}`, promptTokens: p, maxTokens: 1 }, 0);
      runUntilIdle(engine);
    }
    const s = engine.stats();
    assert.ok(s.evictions > 0, "the third prompt needs blocks the first one cached");
    assert.equal(s.freeBlocks + s.cachedBlocks + s.usedBlocks, 64);
    // The most recent prompt is intact; the oldest lost blocks.
    engine.add({ id: "again-2", promptTokens: prompts[2]!, maxTokens: 1 }, 0);
    engine.add({ id: "again-0", promptTokens: prompts[0]!, maxTokens: 1 }, 0);
    const { times } = runUntilIdle(engine);
    assert.equal(times.get("again-2")!.cachedTokens, 384);
    assert.ok(times.get("again-0")!.cachedTokens < 384);
  });

  it("preempts the newest running request by recompute when blocks run out, and still finishes all", () => {
    const engine = createEngine({ kvCacheSize: 64, blockSize: 16 });
    const ids = ["a", "b", "c", "d"];
    for (const [i, id] of ids.entries())
      engine.add({ id, promptTokens: syntheticTokens(200, i), maxTokens: 300 }, 0);
    const preempted: string[] = [];
    const { times } = runUntilIdle(engine, 0, (step) => {
      preempted.push(...step.preempted);
      const s = engine.stats();
      assert.equal(s.freeBlocks + s.cachedBlocks + s.usedBlocks, 64);
    });
    const s = engine.stats();
    assert.ok(s.preemptions > 0);
    assert.equal(s.preemptions, preempted.length);
    assert.equal(preempted[0], "d", "the newest request goes first");
    for (const id of ids) assert.equal(times.get(id)!.generated, 300);
    assert.equal(s.generationTokens, 4 * 300);
    assert.equal(s.usedBlocks, 0);
  });

  it("rejects requests longer than maxModelLen (or than the whole cache) as a value", () => {
    const engine = createEngine({ maxModelLen: 1000, kvCacheSize: 50, blockSize: 16 });
    assert.deepEqual(engine.add({ id: "x", promptTokens: syntheticTokens(990, 1), maxTokens: 20 }, 0), {
      reason: "too-long",
      maxModelLen: 800,
    });
    assert.equal(engine.add({ id: "y", promptTokens: syntheticTokens(700, 1), maxTokens: 100 }, 0), null);
    assert.deepEqual(engine.add({ id: "y", promptTokens: syntheticTokens(10, 1), maxTokens: 1 }, 0), {
      reason: "duplicate-id",
    });
  });

  it("aborts free a request's blocks at once, wherever it is", () => {
    const engine = createEngine({ kvCacheSize: 64, maxNumSeqs: 1 });
    engine.add({ id: "run", promptTokens: syntheticTokens(300, 1), maxTokens: 100 }, 0);
    engine.add({ id: "wait", promptTokens: syntheticTokens(300, 2), maxTokens: 100 }, 0);
    engine.step(0);
    assert.ok(engine.stats().usedBlocks > 0);
    assert.equal(engine.abort("run"), true);
    assert.equal(engine.stats().usedBlocks, 0);
    assert.equal(engine.abort("wait"), true);
    assert.equal(engine.abort("wait"), false);
    assert.equal(engine.hasWork(), false);
    assert.equal(engine.step(0), null);
    assert.deepEqual([engine.stats().running, engine.stats().waiting], [0, 0]);
  });
});
