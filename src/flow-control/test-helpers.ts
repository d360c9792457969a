/**
 * Test fixtures for flow control (used by tests only): a controller built from a config input with
 * default built-in policies, a compact item factory, and a seeded PRNG for property tests.
 */
import { ManualClock } from "../core/clock.ts";
import { type Endpoint, emptyMetrics, type EndpointMetrics } from "../endpoints/endpoint.ts";
import { CharChunkTokenizer } from "../tokenizer/tokenizer.ts";
import { createFlowController, type FlowControlRuntime } from "./build.ts";
import { type FlowControlConfigInput, flowControlConfigSchema } from "./config.ts";
import type { FlowObserver } from "./observer.ts";
import type { Plugin } from "../plugin/types.ts";
import type { FlowItem } from "./types.ts";

/** Builds a controller from a raw `flowControl` section plus optional named plugin instances. */
export function testController(
  input: FlowControlConfigInput = {},
  plugins: Plugin[] = [],
  observer?: FlowObserver,
): FlowControlRuntime {
  const byName = new Map(plugins.map((plugin) => [plugin.name, plugin]));
  return createFlowController(
    flowControlConfigSchema.parse(input),
    { clock: new ManualClock(), tokenizer: new CharChunkTokenizer(), lookup: (name) => byName.get(name) },
    observer,
  );
}

/** A flow item with small defaults: fairness `default-flow`, priority 0, 100 bytes, 10 tokens. */
export function item(id: string, enqueuedAt: number, overrides: Partial<FlowItem> = {}): FlowItem {
  return {
    id,
    fairnessId: "default-flow",
    priority: 0,
    bytes: 100,
    enqueuedAt,
    inputTokens: 10,
    ...overrides,
  };
}

/** An endpoint with the given metrics (scraped at `updatedAtMs`, default 1). */
export function endpoint(key: string, metrics: Partial<EndpointMetrics> = {}): Endpoint {
  return {
    metadata: { key, name: key, namespace: "default", address: "127.0.0.1", port: 8000, labels: {} },
    metrics: { ...emptyMetrics(), updatedAtMs: 1, ...metrics },
    attributes: new Map(),
  };
}

export { seededRandom } from "../core/random.ts";
