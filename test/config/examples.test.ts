/** Every example under examples/configs loads, and the routing it promises is what it does. */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { LlmdError } from "../../src/api/errors.ts";
import { loadConfig, type RuntimeConfig } from "../../src/config/load.ts";
import { ManualClock } from "../../src/core/clock.ts";
import type { Endpoint } from "../../src/endpoints/endpoint.ts";
import { makeContext, makeEndpoint } from "../../src/scheduler/framework/testing.ts";

const DIR = join(import.meta.dirname, "../../examples/configs");
const load = (name: string) =>
  loadConfig({ path: join(DIR, name) }, { allowExperimentalPlugins: true, clock: new ManualClock() });

test("every example config loads", () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith(".yaml"));
  assert.ok(files.length >= 4);
  for (const file of files) assert.ok(load(file).scheduler, file);
});

test("session.yaml needs --allow-experimental-plugins (alpha plugins)", () => {
  assert.throws(
    () => loadConfig({ path: join(DIR, "session.yaml") }),
    /alpha; enable it with --allow-experimental-plugins/,
  );
});

/** Runs one request through the full lifecycle and returns the endpoint it went to. */
function route(
  config: RuntimeConfig,
  endpoints: Endpoint[],
  promptText: string,
  headers: Record<string, string> = {},
) {
  const ctx = makeContext({ promptText, headers, requestId: promptText.slice(-12) });
  const pending = config.scheduler.prepare(ctx, endpoints);
  assert.equal(pending, undefined, "built-in producers are synchronous");
  const result = config.scheduler.schedule(ctx, endpoints);
  assert.ok(!(result instanceof LlmdError), String(result));
  config.scheduler.preRequest(ctx, result);
  const target = result.profileResults.get(result.primaryProfileName)!.targetEndpoints[0]!;
  return { ctx, target };
}

const fleet = () =>
  ["a", "b", "c", "d"].map((n) =>
    makeEndpoint(n, { metrics: { cacheBlockSize: 16, cacheNumBlocks: 10_000 } }),
  );
const prefix = "You are a coding agent. ".repeat(200);

test("default.yaml: requests sharing a prefix follow it; distinct prompts spread", () => {
  const config = load("default.yaml");
  const endpoints = fleet();
  const first = route(config, endpoints, `${prefix} task 1`);
  config.scheduler.complete(first.ctx, first.target, "natural", undefined);
  for (let i = 2; i < 6; i++) {
    const { ctx, target } = route(config, endpoints, `${prefix} task ${i}`);
    assert.equal(target, first.target, "same prefix, same endpoint");
    config.scheduler.complete(ctx, target, "natural", undefined);
  }
  const spread = new Set<Endpoint>();
  for (let i = 0; i < 4; i++)
    spread.add(route(config, endpoints, `unrelated prompt number ${i} `.repeat(50)).target);
  assert.equal(spread.size, 4, "a burst of cold prompts lands on four different endpoints");
});

test("load-only.yaml: requests sharing a prefix spread", () => {
  const config = load("load-only.yaml");
  const endpoints = fleet();
  const targets = new Set<Endpoint>();
  for (let i = 0; i < 4; i++) targets.add(route(config, endpoints, `${prefix} task ${i}`).target);
  assert.equal(targets.size, 4);
});

test("prefix-load.yaml: llm-d's legacy blend keeps a shared prefix together", () => {
  const config = load("prefix-load.yaml");
  const endpoints = fleet();
  const first = route(config, endpoints, `${prefix} q0`).target;
  for (let i = 1; i < 4; i++) assert.equal(route(config, endpoints, `${prefix} q${i}`).target, first);
});

test("session.yaml: one session sticks to its endpoint even with unrelated prompts", () => {
  const config = load("session.yaml");
  const endpoints = fleet();
  const first = route(config, endpoints, "hello", { "x-session-id": "s-1" }).target;
  for (let i = 0; i < 4; i++) {
    assert.equal(
      route(config, endpoints, `different prompt ${i}`.repeat(20), { "x-session-id": "s-1" }).target,
      first,
    );
  }
});
