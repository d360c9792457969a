import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runUntilIdle } from "./drive.ts";
import { createEngine } from "./index.ts";
import { concatTokens, syntheticTokens } from "./test-prompts.ts";
import { LayerCosts } from "./timing.ts";

const prefix = syntheticTokens(10_000, 1);
const promptA = concatTokens(prefix, syntheticTokens(100, 2));
const promptB = concatTokens(prefix, syntheticTokens(100, 3));

describe("prefix caching", () => {
  it("a second request sharing a 10,000-token prefix hits its whole blocks and starts sooner", () => {
    const engine = createEngine();
    engine.add({ id: "a", promptTokens: promptA, maxTokens: 1 }, 0);
    const first = runUntilIdle(engine, 0);
    engine.add({ id: "b", promptTokens: promptB, maxTokens: 1 }, first.endMs);
    const second = runUntilIdle(engine, first.endMs);
    const a = first.times.get("a")!;
    const b = second.times.get("b")!;
    assert.equal(a.cachedTokens, 0);
    assert.equal(b.cachedTokens, Math.floor(10_000 / 16) * 16);
    const ttftA = a.firstTokenMs;
    const ttftB = b.firstTokenMs - first.endMs;
    const o = engine.options;
    const costs = new LayerCosts(o.profile.model);
    const expectedB =
      o.profile.model.layers * (costs.linear.at(100) + costs.causal.at(100) + costs.prefix.at(100, 10_000)) +
      o.stepOverheadMs;
    assert.ok(Math.abs(ttftB - expectedB) < 1e-9, `ttft(b) ${ttftB} vs composition ${expectedB}`);
    assert.ok(ttftB < ttftA / 5, `cached request should be much faster: ${ttftB} vs ${ttftA}`);
    const s = engine.stats();
    assert.equal(s.prefixQueries, promptA.length + promptB.length);
    assert.equal(s.prefixHits, 10_000);
  });

  it("always recomputes the last prompt token: an identical block-aligned prompt hits floor((n-1)/B) blocks", () => {
    const engine = createEngine({ blockSize: 16 });
    engine.add({ id: "a", promptTokens: prefix, maxTokens: 1 }, 0);
    runUntilIdle(engine);
    engine.add({ id: "b", promptTokens: prefix, maxTokens: 1 }, 0);
    const { times } = runUntilIdle(engine);
    assert.equal(times.get("b")!.cachedTokens, Math.floor((10_000 - 1) / 16) * 16);
  });

  it("counts whole blocks only: a shared prefix that ends mid-block hits the blocks before it", () => {
    const engine = createEngine({ blockSize: 64 });
    const shared = syntheticTokens(1000, 7);
    engine.add({ id: "a", promptTokens: concatTokens(shared, syntheticTokens(50, 8)), maxTokens: 1 }, 0);
    runUntilIdle(engine);
    engine.add({ id: "b", promptTokens: concatTokens(shared, syntheticTokens(50, 9)), maxTokens: 1 }, 0);
    const { times } = runUntilIdle(engine);
    assert.equal(times.get("b")!.cachedTokens, Math.floor(1000 / 64) * 64);
  });

  it("separates caches by LoRA adapter and cache salt", () => {
    const engine = createEngine();
    engine.add({ id: "base", promptTokens: promptA, maxTokens: 1 }, 0);
    runUntilIdle(engine);
    const variants = [
      { id: "lora", lora: "adapter-1" },
      { id: "salt", cacheSalt: "tenant-x" },
      { id: "same", cacheSalt: undefined },
    ];
    for (const v of variants) engine.add({ ...v, promptTokens: promptA, maxTokens: 1 }, 0);
    const { times } = runUntilIdle(engine);
    assert.equal(times.get("lora")!.cachedTokens, 0);
    assert.equal(times.get("salt")!.cachedTokens, 0);
    assert.equal(times.get("same")!.cachedTokens, Math.floor((promptA.length - 1) / 16) * 16);
  });

  it("caches nothing when prefix caching is disabled", () => {
    const engine = createEngine({ enablePrefixCaching: false });
    for (const id of ["a", "b"]) {
      engine.add({ id, promptTokens: promptA, maxTokens: 1 }, 0);
      const { times } = runUntilIdle(engine);
      assert.equal(times.get(id)!.cachedTokens, 0);
    }
    assert.equal(engine.stats().prefixQueries, 0);
    assert.equal(engine.stats().cachedBlocks, 0);
  });
});
