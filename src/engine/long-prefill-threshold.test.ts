import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runUntilIdle } from "./drive.ts";
import { createEngine } from "./index.ts";
import { syntheticTokens } from "./test-prompts.ts";

/** A 40K-token prompt, then a 1K-token one a step later; each request's timeline and the steps' prefill tokens. */
function longThenShort(longPrefillTokenThreshold?: number) {
  const engine = createEngine({ maxNumBatchedTokens: 8192, longPrefillTokenThreshold });
  engine.add({ id: "long", promptTokens: syntheticTokens(40_000, 1), maxTokens: 4 }, 0);
  const first = engine.step(0)!;
  engine.add({ id: "short", promptTokens: syntheticTokens(1_000, 2), maxTokens: 4 }, first.durationMs);
  const prefills: number[] = [first.prefillTokens];
  const { times } = runUntilIdle(engine, first.durationMs, (step) => prefills.push(step.prefillTokens));
  return { long: times.get("long")!, short: times.get("short")!, prefills };
}

describe("long-prefill token threshold (vLLM's --long-prefill-token-threshold)", () => {
  it("without it a long prefill takes the whole budget, so a short prompt behind it waits", () => {
    const { long, short, prefills } = longThenShort();
    assert.equal(prefills[0], 8192);
    assert.ok(short.firstTokenMs > long.firstTokenMs, "the short prompt starts after the long prefill");
  });

  it("with it the short prompt starts beside the long prefill and finishes first", () => {
    const { long, short, prefills } = longThenShort(2048);
    assert.equal(prefills[0], 2048, "one request takes at most the threshold of a step");
    assert.equal(prefills[1], 2048 + 1000, "the rest of the budget starts the short prompt whole");
    assert.ok(
      short.finishMs < long.firstTokenMs,
      "the short request is done before the long one's first token",
    );
    assert.equal(long.generated, 4);
    assert.equal(short.generated, 4);
  });

  it("a threshold above the step budget changes nothing", () => {
    const { prefills } = longThenShort(50_000);
    assert.equal(prefills[0], 8192);
  });

  it("rejects a negative threshold", () => {
    assert.throws(
      () => createEngine({ longPrefillTokenThreshold: -1 }),
      (e: Error & { code?: string }) => e.code === "invalid_engine_options",
    );
  });
});
