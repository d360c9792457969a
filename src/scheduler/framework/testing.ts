/**
 * Test helpers for plugin and framework tests: endpoints, contexts and plugin environments built
 * directly, with sensible defaults. Not used by production code.
 */
import { type Clock, ManualClock } from "../../core/clock.ts";
import { type Endpoint, type EndpointMetrics, emptyMetrics, ROLE_LABEL } from "../../endpoints/endpoint.ts";
import { defaultTokenizer } from "../../tokenizer/tokenizer.ts";
import type { Filter, SchedulingContext, SchedulingRequest } from "./types.ts";
import type { Plugin, PluginDefinition, PluginEnvironment } from "../../plugin/types.ts";

/** Options of `makeEndpoint`: a name plus any metric or label overrides. */
export interface TestEndpointOptions {
  labels?: Record<string, string>;
  metrics?: Partial<EndpointMetrics>;
  namespace?: string;
  port?: number;
  dpRank?: number;
}

/** An endpoint `namespace/name` (default namespace `default`) at 10.0.0.1:`port` (default 8000). */
export function makeEndpoint(name: string, options: TestEndpointOptions = {}): Endpoint {
  const namespace = options.namespace ?? "default";
  return {
    metadata: {
      key: `${namespace}/${name}`,
      name,
      namespace,
      address: "10.0.0.1",
      port: options.port ?? 8000,
      labels: options.labels ?? {},
      ...(options.dpRank === undefined ? {} : { dpRank: options.dpRank }),
    },
    metrics: { ...emptyMetrics(), updatedAtMs: 1, ...options.metrics },
    attributes: new Map(),
  };
}

/** A scheduling context for a request with the given overrides (model `m`, empty prompt by default). */
export function makeContext(
  request: Partial<SchedulingRequest> = {},
  clock: Clock = new ManualClock(),
): SchedulingContext {
  return {
    request: {
      requestId: "req-1",
      model: "m",
      path: "/v1/completions",
      headers: {},
      promptText: "",
      body: {},
      bodyBytes: 0,
      priority: 0,
      fairnessId: "default-flow",
      attributes: new Map(),
      ...request,
    },
    state: new Map(),
    clock,
  };
}

/** A plugin environment with a manual clock, the default tokenizer and lookups into `plugins`. */
export function makeEnv(
  name: string,
  plugins: Record<string, Plugin> = {},
  clock: Clock = new ManualClock(),
): PluginEnvironment {
  return { name, clock, tokenizer: defaultTokenizer, lookup: (n) => plugins[n] };
}

/** Every `llm-d.ai/role` value llm-d defines, for role-filter tests. */
const ALL_ROLES = [
  "encode",
  "prefill",
  "decode",
  "encode-prefill",
  "prefill-decode",
  "encode-prefill-decode",
  "both",
];

/**
 * Names of the endpoints a role filter keeps, from one endpoint per llm-d role (named after it) plus one
 * without a role label (named `unlabeled`).
 */
export function rolesKeptBy(definition: PluginDefinition<unknown>): string[] {
  const filter = definition.create({}, makeEnv(definition.type)) as Filter;
  const endpoints = [
    ...ALL_ROLES.map((role) => makeEndpoint(role, { labels: { [ROLE_LABEL]: role } })),
    makeEndpoint("unlabeled"),
  ];
  return filter.filter(makeContext(), endpoints).map((e) => e.metadata.name);
}

export { seededRandom } from "../../core/random.ts";
