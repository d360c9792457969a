import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runUntilIdle } from "./drive.ts";
import { createEngine } from "./index.ts";
import { StepShape } from "./step-shape.ts";
import { syntheticTokens } from "./test-prompts.ts";
import { ProfileTimingModel } from "./timing.ts";

/** Caches `a` (32 blocks), then floods the 64-block GPU cache with another prompt so `a` is evicted. */
function evictFirstPrompt(options: Parameters<typeof createEngine>[0]) {
  const engine = createEngine({ kvCacheSize: 64, blockSize: 16, ...options });
  const a = syntheticTokens(512, 1);
  engine.add({ id: "a", promptTokens: a, maxTokens: 1 }, 0);
  runUntilIdle(engine);
  engine.add({ id: "flood", promptTokens: syntheticTokens(1023, 2), maxTokens: 1 }, 0);
  runUntilIdle(engine);
  engine.add({ id: "a-again", promptTokens: a, maxTokens: 1 }, 0);
  return { engine, result: runUntilIdle(engine).times.get("a-again")! };
}

describe("offload tiers", () => {
  it("reloads a block evicted to CPU at its transfer cost instead of recomputing it", () => {
    const { engine, result } = evictFirstPrompt({ cpuOffloadGb: 1 });
    const o = engine.options;
    const hitBlocks = Math.floor(511 / 16);
    assert.equal(result.cachedTokens, hitBlocks * 16);
    assert.equal(engine.stats().offloadHits, hitBlocks * 16);
    const shape = new StepShape(1);
    shape.addPrefill(512 - hitBlocks * 16, hitBlocks * 16, true, true);
    shape.cpuReloadBytes = hitBlocks * o.blockBytes;
    const expected = new ProfileTimingModel(o).stepMs(shape);
    assert.ok(Math.abs(result.firstTokenMs - expected) < 1e-9, `${result.firstTokenMs} vs ${expected}`);
    // The reload adds exactly its bytes over the CPU link's bandwidth (GB/s = 1e6 bytes per ms).
    shape.cpuReloadBytes = 0;
    const transferMs = (hitBlocks * o.blockBytes) / (o.cpuOffloadGBps * 1e6);
    assert.ok(transferMs > 0);
    const reload = result.firstTokenMs - new ProfileTimingModel(o).stepMs(shape);
    assert.ok(Math.abs(reload - transferMs) < 1e-9, `reload ${reload} ms vs ${transferMs} ms`);
    const recompute = evictFirstPrompt({}).result;
    assert.equal(recompute.cachedTokens, 0);
    assert.ok(result.firstTokenMs < recompute.firstTokenMs);
  });

  it("cascades CPU victims to storage and reloads them at storage bandwidth", () => {
    const blockBytes = 131072 * 16;
    const { engine, result } = evictFirstPrompt({
      cpuOffloadGb: (8 * blockBytes) / 1e9, // room for 8 blocks only
      storageOffloadGb: 1,
      storageOffloadGBps: 5,
    });
    const s = engine.stats();
    assert.equal(s.cpuBlocksHeld, 8);
    assert.ok(s.storageBlocksHeld > 0);
    assert.equal(result.cachedTokens, Math.floor(511 / 16) * 16);
    assert.equal(s.offloadHits, result.cachedTokens);
  });
});
