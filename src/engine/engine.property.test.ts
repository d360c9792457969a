import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../core/random.ts";
import { createEngine } from "./index.ts";
import { concatTokens, syntheticTokens } from "./test-prompts.ts";

const prefixes = [0, 1, 2].map((i) => syntheticTokens(96, 1000 + i));

/** Runs one random schedule and returns the engine's final counters. */
function randomRun(seed: number, cpu: boolean) {
  const random = seededRandom(seed);
  const capacity = 48;
  const engine = createEngine({
    kvCacheSize: capacity,
    blockSize: 8,
    maxNumSeqs: 6,
    maxNumBatchedTokens: 64,
    cpuOffloadGb: cpu ? (16 * 131072 * 8) / 1e9 : 0,
  });
  const added = new Set<string>();
  const ended = new Set<string>();
  const check = () => {
    const s = engine.stats();
    assert.equal(s.freeBlocks + s.cachedBlocks + s.usedBlocks, capacity, `seed ${seed}: blocks leaked`);
  };
  let now = 0;
  for (let op = 0; op < 400; op++) {
    const r = random();
    if (r < 0.35) {
      const id = `q${op}`;
      const prompt = concatTokens(
        prefixes[Math.floor(random() * 3)]!,
        syntheticTokens(1 + Math.floor(random() * 90), op),
      );
      if (engine.add({ id, promptTokens: prompt, maxTokens: 1 + Math.floor(random() * 40) }, now) === null)
        added.add(id);
    } else if (r < 0.45 && added.size > 0) {
      const live = [...added].filter((id) => !ended.has(id));
      const victim = live[Math.floor(random() * live.length)];
      if (victim !== undefined && engine.abort(victim)) ended.add(victim);
    } else {
      const step = engine.step(now);
      if (step) now += step.durationMs;
      for (const o of step?.outputs ?? []) if (o.finished) ended.add(o.id);
    }
    check();
  }
  for (let step = engine.step(now); step; step = engine.step(now)) {
    for (const o of step.outputs) if (o.finished) ended.add(o.id);
    check();
  }
  assert.deepEqual(
    [...added].filter((id) => !ended.has(id)),
    [],
    `seed ${seed}: requests left behind`,
  );
  assert.equal(engine.stats().usedBlocks, 0);
  assert.equal(engine.hasWork(), false);
  return engine.stats();
}

describe("engine properties", () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`random adds/aborts/steps never leak blocks and every request ends (seed ${seed})`, () => {
      const s = randomRun(seed, seed % 2 === 0);
      // The schedule is tight enough that the interesting paths run, not just the happy one.
      assert.ok(s.preemptions > 0 && s.evictions > 0 && s.prefixHits > 0, JSON.stringify(s));
      if (seed % 2 === 0) assert.ok(s.offloadHits > 0);
    });
  }
});
