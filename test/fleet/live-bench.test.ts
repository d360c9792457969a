import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { runLive } from "../../src/bench/live/load-generator.ts";
import { summarize } from "../../src/bench/metrics/summary.ts";
import { CHAT_DEFAULTS, chatSession } from "../../src/bench/workloads/chat.ts";
import { ClosedLoopWorkload } from "../../src/bench/workloads/closed-loop.ts";
import { SyntheticPromptBuilder } from "../../src/bench/workloads/synthetic-prompt.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, startTestSim } from "../sim/helpers.ts";

describe("llmd bench load generator against llmd sim on loopback", () => {
  let sim: SimServer;
  before(async () => {
    sim = await startTestSim();
  });
  after(() => sim.close());

  it("replays closed-loop chat over HTTP; one server's cached tokens equal the ideal ceiling", async () => {
    const options = { ...CHAT_DEFAULTS, minTurns: 3, maxTurns: 3, thinkMeanMs: 200, seed: 4 };
    const workload = new ClosedLoopWorkload({
      name: "chat",
      concurrency: 2,
      rampMs: 100,
      stopAtMs: 1500,
      factory: (i) => chatSession(options, i),
    });
    const records = await runLive({
      url: sim.url,
      model: MODEL,
      workload,
      prompts: new SyntheticPromptBuilder(),
      durationMs: 1500,
      timeScale: 1,
      blockTokens: 16,
    });
    assert.ok(records.length >= 6, `only ${records.length} requests`);
    for (const r of records) {
      assert.equal(r.error, undefined);
      assert.ok(r.firstTokenMs > r.arrivalMs && r.endMs >= r.firstTokenMs);
      assert.ok(r.outputTokens >= 80 && r.outputTokens <= 120);
      assert.equal(r.cachedTokens, r.idealCachedTokens, r.id);
    }
    const later = records.filter((r) => !r.id.endsWith(":0"));
    assert.ok(later.every((r) => r.cachedTokens > 0));
    const s = summarize(records, {
      fromMs: 0,
      toMs: 1500,
      slo: { ttftMs: 1000, itlMs: 100 },
      gpuHourPrice: 2.71,
      gpus: 1,
    });
    assert.equal(s.captured, 1);
  });
});
