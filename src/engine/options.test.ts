import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LlmdError } from "../api/errors.ts";
import {
  kvCapacityTokens,
  PROFILE_NAMES,
  parseProfileName,
  resolveEngineOptions,
  resolveProfile,
} from "./index.ts";

describe("engine options", () => {
  it("derives KV capacity from the profile: (141e9*0.9 - layers*layer_weight_bytes) / kv_bytes_per_token", () => {
    const p = resolveProfile("h200-llama3-8b");
    const expected = Math.floor((141e9 * 0.9 - 32 * 436207616) / 131072);
    assert.equal(kvCapacityTokens(p), expected);
    const o = resolveEngineOptions({ blockSize: 32 });
    assert.equal(o.numGpuBlocks, Math.floor(expected / 32));
    assert.equal(resolveEngineOptions({ kvCacheSize: 100 }).numGpuBlocks, 100);
  });

  it("sizes offload tiers in blocks of kv_bytes_per_token x blockSize", () => {
    const o = resolveEngineOptions({ cpuOffloadGb: 100, storageOffloadGb: 1000 });
    assert.equal(o.blockBytes, 131072 * 16);
    assert.equal(o.numCpuBlocks, Math.floor(100e9 / o.blockBytes));
    assert.equal(o.numStorageBlocks, Math.floor(1000e9 / o.blockBytes));
  });

  it("defaults maxModelLen per model and parses profile names", () => {
    assert.equal(resolveEngineOptions().maxModelLen, 131072);
    assert.equal(resolveEngineOptions({ profile: "qwen3-32b-tp2" }).maxModelLen, 40960);
    for (const name of PROFILE_NAMES) assert.equal(parseProfileName(name), name);
    assert.equal(parseProfileName("gpt-5"), null);
  });

  it("rejects invalid values naming the field", () => {
    const cases: [object, string][] = [
      [{ blockSize: 4 }, "blockSize"],
      [{ profile: "nope" }, "profile"],
      [{ gpuMemoryUtilization: 1.5 }, "gpuMemoryUtilization"],
      [{ maxNumSeqs: 0 }, "maxNumSeqs"],
      [{ timing: { kind: "simple", timeFactorUnderLoad: 0.5 } }, "timing.timeFactorUnderLoad"],
    ];
    for (const [options, field] of cases) {
      assert.throws(
        () => resolveEngineOptions(options),
        (e: unknown) => e instanceof LlmdError && e.code === "invalid_engine_options" && e.param === field,
      );
    }
  });
});
