import assert from "node:assert/strict";
import { test } from "node:test";
import { LlmdError } from "../../api/errors.ts";
import { loadConfig } from "../../config/load.ts";
import type { SchedulerObserver } from "./instrument.ts";
import { makeContext, makeEndpoint } from "./testing.ts";
import type { Plugin } from "../../plugin/types.ts";

const CONFIG = `
apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- {type: decode-filter}
- {type: queue-scorer}
- {type: kv-cache-utilization-scorer, name: kv}
`;

test("the instrumented scheduler reports every plugin call and the e2e duration, sharing state", () => {
  const calls: string[] = [];
  const pluginSeconds: number[] = [];
  const e2e: { seconds: number; ok: boolean }[] = [];
  const observer: SchedulerObserver = {
    pluginDuration: (point: string, plugin: Plugin, seconds: number) => {
      pluginSeconds.push(seconds);
      calls.push(`${point}:${plugin.type}:${plugin.name}`);
    },
    schedulerDuration: (seconds, ok) => e2e.push({ seconds, ok }),
  };
  const runtime = loadConfig(CONFIG);
  const scheduler = runtime.instrument(observer);
  const endpoints = [makeEndpoint("a"), makeEndpoint("b", { metrics: { waitingQueueSize: 3 } })];
  const started = performance.now();
  const result = scheduler.schedule(makeContext(), endpoints);
  const wallSeconds = (performance.now() - started) / 1000;
  assert.ok(!(result instanceof LlmdError));
  assert.equal(result.profileResults.get("default")!.targetEndpoints[0]!.metadata.name, "a");
  for (const expected of [
    "ProfilePicker:single-profile-handler:single-profile-handler",
    "Filter:decode-filter:decode-filter",
    "Scorer:queue-scorer:queue-scorer",
    "Scorer:kv-cache-utilization-scorer:kv",
    "Picker:max-score-picker:max-score-picker",
    "ProcessProfilesResults:single-profile-handler:single-profile-handler",
  ]) {
    assert.ok(calls.includes(expected), `${expected} in ${calls}`);
  }
  assert.deepEqual(
    e2e.map((d) => d.ok),
    [true],
  );
  // Durations are seconds of wall time: the plugin calls happen one after another inside the
  // scheduling call, which itself happens inside the measured window.
  const seconds = e2e[0]!.seconds;
  assert.ok(seconds > 0 && seconds <= wallSeconds, `e2e ${seconds} s within the ${wallSeconds} s window`);
  const sum = pluginSeconds.reduce((a, b) => a + b, 0);
  for (const s of pluginSeconds) assert.ok(s >= 0 && Number.isFinite(s), `plugin duration ${s}`);
  assert.ok(sum <= seconds + 1e-9, `plugin durations ${sum} s exceed the e2e ${seconds} s`);
});

test("the uninstrumented scheduler reports nothing", () => {
  const runtime = loadConfig(CONFIG);
  let reports = 0;
  runtime.instrument({ pluginDuration: () => reports++, schedulerDuration: () => reports++ });
  runtime.scheduler.schedule(makeContext(), [makeEndpoint("a")]);
  assert.equal(reports, 0);
});
