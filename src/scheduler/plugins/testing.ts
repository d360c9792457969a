/**
 * Test helpers for plugins: endpoints, scheduling contexts, environments and results built
 * directly, without the framework. For tests and benchmarks only.
 */
import { ManualClock } from "../../core/clock.ts";
import { type Endpoint, type EndpointMetrics, emptyMetrics } from "../../endpoints/endpoint.ts";
import { defaultTokenizer } from "../../tokenizer/tokenizer.ts";
import type {
  Plugin,
  PluginDefinition,
  PluginEnvironment,
  SchedulingContext,
  SchedulingRequest,
  SchedulingResult,
} from "../framework/types.ts";

/** An endpoint `default/<name>` with the given metrics, labels and rank. */
export function makeEndpoint(
  name: string,
  metrics: Partial<EndpointMetrics> = {},
  options: { labels?: Record<string, string>; dpRank?: number; namespace?: string } = {},
): Endpoint {
  const namespace = options.namespace ?? "default";
  const rankSuffix = options.dpRank === undefined ? "" : `-rank-${options.dpRank}`;
  return {
    metadata: {
      key: `${namespace}/${name}${rankSuffix}`,
      name,
      namespace,
      address: "127.0.0.1",
      port: 8000 + (options.dpRank ?? 0),
      labels: options.labels ?? {},
      ...(options.dpRank === undefined ? {} : { dpRank: options.dpRank }),
    },
    metrics: { ...emptyMetrics(), ...metrics },
    attributes: new Map(),
  };
}

/** A request with defaults for every field not given. */
export function makeRequest(overrides: Partial<SchedulingRequest> = {}): SchedulingRequest {
  return {
    requestId: "req-1",
    model: "test-model",
    path: "/v1/completions",
    headers: {},
    promptText: "",
    body: {},
    bodyBytes: 0,
    priority: 0,
    fairnessId: "default-flow",
    attributes: new Map(),
    ...overrides,
  };
}

/** A fresh scheduling context over `request` (defaults filled) and a manual clock. */
export function makeContext(
  request: Partial<SchedulingRequest> = {},
  clock: ManualClock = new ManualClock(),
): SchedulingContext {
  return { request: makeRequest(request), state: new Map(), clock };
}

/** A plugin environment with the default tokenizer; `plugins` answers `lookup`. */
export function makeEnv(name: string, clock = new ManualClock(), plugins: Plugin[] = []): PluginEnvironment {
  return {
    name,
    clock,
    tokenizer: defaultTokenizer,
    lookup: (wanted) => plugins.find((p) => p.name === wanted),
  };
}

/** Validates `params` with the definition's schema and creates an instance named after its type. */
export function instantiate<P, T extends Plugin>(
  definition: PluginDefinition<P>,
  params: unknown = {},
  env: PluginEnvironment = makeEnv(definition.type),
): T {
  return definition.create(definition.parameters.parse(params), env) as T;
}

/** A single-profile result `default` that picked `endpoints` (best first). */
export function resultFor(...endpoints: Endpoint[]): SchedulingResult {
  return {
    primaryProfileName: "default",
    profileResults: new Map([["default", { targetEndpoints: endpoints, scored: [] }]]),
  };
}
