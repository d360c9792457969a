import assert from "node:assert/strict";
import { test } from "node:test";
import { parseDurationMs, parseSimConfig } from "./config.ts";

test("Go durations and bare numbers parse to milliseconds", () => {
  const cases: [string, number][] = [
    ["2000ms", 2000],
    ["50us", 0.05],
    ["1.5s", 1500],
    ["1m30s", 90_000],
    ["12", 12],
  ];
  for (const [text, ms] of cases) assert.equal(parseDurationMs(text), ms, text);
  for (const bad of ["", "ms", "10 parsecs", "1s2"]) assert.ok(Number.isNaN(parseDurationMs(bad)), bad);
});

test("flags override the file; ignored llm-d-inference-sim keys load; unknown keys fail by name", () => {
  const file = { model: "m", "max-num-seqs": 5, "enable-kvcache": true, "lora-modules": ['{"name":"l1"}'] };
  const merged = parseSimConfig(file, { "max-num-seqs": "9", "time-to-first-token": "20ms" });
  assert.ok(merged.ok);
  assert.equal(merged.config["max-num-seqs"], 9);
  assert.equal(merged.config["time-to-first-token"], 20);
  assert.deepEqual(merged.config["lora-modules"], ["l1"]);
  const bad = parseSimConfig({ model: "m", "block-size": 7, colour: "red" });
  assert.ok(!bad.ok);
  assert.match(bad.error, /block-size: expected one of 8, 16, 32, 64, 128/);
  assert.match(bad.error, /colour/);
});
