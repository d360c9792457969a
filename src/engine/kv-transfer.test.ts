import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runUntilIdle } from "./drive.ts";
import { createEngine, KV_LINKS, kvTransferMs, kvTransferSize } from "./index.ts";
import { syntheticTokens } from "./test-prompts.ts";

describe("P/D in the engine", () => {
  it("a prefill leg holds its blocks after finishing until released", () => {
    const engine = createEngine({ kvCacheSize: 256 });
    engine.add({ id: "p", promptTokens: syntheticTokens(1000, 1), maxTokens: 1, holdKvOnFinish: true }, 0);
    runUntilIdle(engine);
    const held = engine.heldBlockIds("p");
    assert.equal(held?.length, Math.ceil(1001 / 16));
    assert.deepEqual(
      [engine.stats().heldRequests, engine.stats().heldBlocks, engine.stats().usedBlocks],
      [1, held!.length, held!.length],
    );
    assert.equal(engine.hasWork(), false);
    assert.equal(engine.resetPrefixCache(), false);
    assert.equal(engine.releaseHeld("p"), true);
    assert.equal(engine.releaseHeld("p"), false);
    assert.deepEqual([engine.stats().heldBlocks, engine.stats().usedBlocks], [0, 0]);
  });

  it("abort frees a held request's blocks", () => {
    const engine = createEngine({ kvCacheSize: 256 });
    engine.add({ id: "p", promptTokens: syntheticTokens(100, 1), maxTokens: 1, holdKvOnFinish: true }, 0);
    runUntilIdle(engine);
    assert.equal(engine.abort("p"), true);
    assert.equal(engine.stats().usedBlocks, 0);
  });

  it("a decode leg with the remote KV skips its prefill but the last prompt token", () => {
    const prompt = syntheticTokens(4000, 2);
    const local = createEngine();
    local.add({ id: "d", promptTokens: prompt, maxTokens: 2 }, 0);
    const full = runUntilIdle(local).times.get("d")!;
    const remote = createEngine();
    remote.add({ id: "d", promptTokens: prompt, maxTokens: 2, remoteKvTokens: prompt.length }, 0);
    const pd = runUntilIdle(remote).times.get("d")!;
    assert.equal(pd.cachedTokens, prompt.length - 1);
    assert.equal(full.cachedTokens, 0);
    assert.ok(pd.firstTokenMs * 10 < full.firstTokenMs, `${pd.firstTokenMs} vs ${full.firstTokenMs} ms`);
    // The pulled blocks are committed to the prefix cache: a repeat hits them locally.
    assert.equal(remote.stats().offloadHits, prompt.length - 1);
    remote.add({ id: "again", promptTokens: prompt, maxTokens: 1 }, 0);
    assert.equal(runUntilIdle(remote).times.get("again")!.cachedTokens, Math.floor(3999 / 16) * 16);
  });

  it("prices a transfer as latency + bytes per GPU / bandwidth", () => {
    const o = createEngine({ profile: "h200-llama3-70b-tp4" }).options;
    const size = kvTransferSize(o, 1000);
    assert.equal(size.bytesPerGpu, 1000 * o.profile.model.kv_bytes_per_token);
    assert.equal(size.bytes, size.bytesPerGpu * 4);
    const ms = kvTransferMs(size, KV_LINKS.infiniband);
    assert.equal(ms, 0.01 + size.bytesPerGpu / 50e6);
    assert.ok(kvTransferMs(size, KV_LINKS.tcp) > kvTransferMs(size, KV_LINKS.roce));
    assert.ok(kvTransferMs(size, KV_LINKS.roce) > kvTransferMs(size, KV_LINKS.nvlink));
  });
});
