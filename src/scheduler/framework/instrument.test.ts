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
  const e2e: boolean[] = [];
  const observer: SchedulerObserver = {
    pluginDuration: (point: string, plugin: Plugin, seconds: number) => {
      assert.ok(seconds >= 0);
      calls.push(`${point}:${plugin.type}:${plugin.name}`);
    },
    schedulerDuration: (seconds, ok) => {
      assert.ok(seconds >= 0);
      e2e.push(ok);
    },
  };
  const runtime = loadConfig(CONFIG);
  const scheduler = runtime.instrument(observer);
  const endpoints = [makeEndpoint("a"), makeEndpoint("b", { metrics: { waitingQueueSize: 3 } })];
  const result = scheduler.schedule(makeContext(), endpoints);
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
  assert.deepEqual(e2e, [true]);
});

test("the uninstrumented scheduler reports nothing", () => {
  const runtime = loadConfig(CONFIG);
  let reports = 0;
  runtime.instrument({ pluginDuration: () => reports++, schedulerDuration: () => reports++ });
  runtime.scheduler.schedule(makeContext(), [makeEndpoint("a")]);
  assert.equal(reports, 0);
});
