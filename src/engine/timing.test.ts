import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { runUntilIdle } from "./drive.ts";
import { interpolate } from "./interp.ts";
import { createEngine, resolveEngineOptions } from "./index.ts";
import { StepShape } from "./step-shape.ts";
import { syntheticTokens } from "./test-prompts.ts";
import { ProfileTimingModel, SimpleTimingModel } from "./timing.ts";

describe("profile timing model", () => {
  const e2e = resolveEngineOptions().profile.gpu.e2e_llama3_8b_hf;
  for (const n of [1024, 4096, 16384]) {
    it(`llama3-8b prefill of ${n} tokens is within 20% of the measured forward pass`, () => {
      const engine = createEngine();
      engine.add({ id: "p", promptTokens: syntheticTokens(n, n), maxTokens: 1 }, 0);
      const ttft = runUntilIdle(engine).times.get("p")!.firstTokenMs;
      const measured = e2e[`prefill:${n}`]!;
      assert.ok(
        Math.abs(ttft - measured) / measured < 0.2,
        `ttft ${ttft.toFixed(1)} vs measured ${measured}`,
      );
    });
  }

  for (const batch of [1, 64]) {
    it(`a decode step at batch ${batch} equals the composition plus overhead`, () => {
      // One budget large enough to prefill all of them in one step, so every decode sees the same context.
      const engine = createEngine({ maxNumBatchedTokens: 64 * 4096 });
      const prompt = 4095; // context of the first decode step = 4096 tokens, a measured point
      for (let i = 0; i < batch; i++)
        engine.add({ id: `r${i}`, promptTokens: syntheticTokens(prompt, i), maxTokens: 2 }, 0);
      const decodeSteps: number[] = [];
      runUntilIdle(engine, 0, (step) => {
        if (step.decodeSeqs === batch && step.prefillTokens === 0) decodeSteps.push(step.durationMs);
      });
      const m = engine.options.profile.model;
      const expected =
        m.layers * (m.linear_ms_per_layer[String(batch)]! + m.attn_decode_ms_per_layer[`${batch}:4096`]!) +
        engine.options.stepOverheadMs;
      assert.equal(decodeSteps.length, 1);
      assert.ok(Math.abs(decodeSteps[0]! - expected) < 1e-9, `${decodeSteps[0]} vs ${expected}`);
    });
  }

  it("adds two all-reduces per layer for tensor-parallel shapes", () => {
    const o = resolveEngineOptions({
      profile: "h200-llama3-70b-tp4",
      allReduceLatencyUs: 10,
      allReduceGBps: 100,
    });
    const shape = new StepShape(4);
    shape.addDecode(4096);
    const m = o.profile.model;
    const bytes = m.hidden * 2 * 1.5; // one token, ring factor 2(tp-1)/tp = 1.5
    const allReduce = 2 * m.layers * (0.01 + bytes / 100e6);
    const compute = m.layers * (m.linear_ms_per_layer["1"]! + m.attn_decode_ms_per_layer["1:4096"]!);
    const got = new ProfileTimingModel(o).stepMs(shape);
    assert.ok(Math.abs(got - (compute + allReduce + o.stepOverheadMs)) < 1e-9, `${got}`);
  });

  it("charges offload reloads at bytes over bandwidth", () => {
    const o = resolveEngineOptions({ cpuOffloadGb: 1, cpuOffloadGBps: 50, stepOverheadMs: 0 });
    const model = new ProfileTimingModel(o);
    const shape = new StepShape(4);
    shape.addDecode(1024);
    const base = model.stepMs(shape);
    shape.cpuReloadBytes = 50e6; // 1 ms at 50 GB/s
    assert.ok(Math.abs(model.stepMs(shape) - base - 1) < 1e-9);
  });
});

describe("interpolation", () => {
  const xs = [256, 1024, 4096];
  const ys = [1, 2, 8];
  it("is log-log between points and exact on them", () => {
    assert.equal(interpolate(xs, ys, 1024), 2);
    assert.ok(Math.abs(interpolate(xs, ys, 512) - Math.SQRT2) < 1e-12);
  });
  it("continues linearly in x past the last point and is 0 at 0", () => {
    const slope = (8 - 2) / (4096 - 1024);
    assert.ok(Math.abs(interpolate(xs, ys, 8192) - (8 + slope * 4096)) < 1e-12);
    assert.equal(interpolate(xs, ys, 0), 0);
  });
});

describe("simple timing model (llm-d-inference-sim)", () => {
  it("per-token: TTFT = overhead + uncached tokens x per-token, then one ITL per token", () => {
    const engine = createEngine({
      timing: { kind: "simple", prefillOverheadMs: 10, prefillTimePerTokenMs: 0.05, interTokenLatencyMs: 20 },
    });
    engine.add({ id: "r", promptTokens: syntheticTokens(1000, 1), maxTokens: 5 }, 0);
    const t = runUntilIdle(engine).times.get("r")!;
    assert.ok(Math.abs(t.firstTokenMs - (10 + 1000 * 0.05)) < 1e-9);
    assert.ok(Math.abs(t.finishMs - t.firstTokenMs - 4 * 20) < 1e-9);
  });

  it("constant: TTFT is the constant, and jitter stays within ±70% and is seeded", () => {
    const timing = { kind: "simple", timeToFirstTokenMs: 100, timeToFirstTokenStdDevMs: 30 } as const;
    const sample = (seed: number) => {
      const model = new SimpleTimingModel(timing, resolveEngineOptions({ seed, timing }));
      const shape = new StepShape(1);
      shape.addPrefill(10, 0, true, true);
      return Array.from({ length: 200 }, () => model.stepMs(shape));
    };
    const a = sample(5);
    assert.deepEqual(a, sample(5));
    assert.ok(a.every((ms) => ms >= 30 && ms <= 170));
    assert.ok(new Set(a).size > 100);
  });
});
