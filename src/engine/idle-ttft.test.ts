import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runUntilIdle } from "./drive.ts";
import { IdleTtft } from "./idle-ttft.ts";
import { createEngine } from "./index.ts";
import { resolveEngineOptions } from "./options.ts";
import { concatTokens, syntheticTokens } from "./test-prompts.ts";
import { createTimingModel } from "./timing.ts";

const PROFILE = { profile: "h200-llama3-8b" as const, maxNumBatchedTokens: 8192 };

function idle(options = {}) {
  const resolved = resolveEngineOptions({ ...PROFILE, ...options });
  return new IdleTtft(resolved, createTimingModel(resolved));
}

describe("IdleTtft: a request's TTFT alone on an idle engine", () => {
  it("equals the engine's own time to first token for a cold prompt", () => {
    const engine = createEngine(PROFILE);
    engine.add({ id: "cold", promptTokens: syntheticTokens(40_000, 1), maxTokens: 2 }, 0);
    const { times } = runUntilIdle(engine);
    const ttft = times.get("cold")!.firstTokenMs;
    assert.ok(Math.abs(idle().ms(40_000, 0) - ttft) < 1e-6, `${idle().ms(40_000, 0)} vs ${ttft}`);
  });

  it("equals it for a prompt whose prefix the engine holds, counting only what is not cached", () => {
    const engine = createEngine(PROFILE);
    const prefix = syntheticTokens(30_000, 2);
    engine.add({ id: "first", promptTokens: prefix, maxTokens: 1 }, 0);
    const warmedAt = runUntilIdle(engine).endMs;
    engine.add(
      { id: "next", promptTokens: concatTokens(prefix, syntheticTokens(9_000, 3)), maxTokens: 2 },
      warmedAt,
    );
    const next = runUntilIdle(engine, warmedAt).times.get("next")!;
    assert.ok(next.cachedTokens > 29_000, `cached ${next.cachedTokens}`);
    const expected = idle().ms(39_000, next.cachedTokens);
    assert.ok(
      Math.abs(next.firstTokenMs - warmedAt - expected) < 1e-6,
      `${next.firstTokenMs - warmedAt} vs ${expected}`,
    );
    assert.ok(expected < idle().ms(39_000, 0) / 2, "the cached prefix is not recomputed");
  });

  it("computes the last token of a fully cached prompt, and chunks by the long-prefill threshold", () => {
    assert.ok(idle().ms(8_192, 8_192) > 0);
    assert.equal(idle().ms(8_192, 8_192), idle().ms(8_192, 8_191));
    assert.ok(idle({ longPrefillTokenThreshold: 2048 }).ms(40_000, 0) > idle().ms(40_000, 0));
  });
});
