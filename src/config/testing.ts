/**
 * Test helpers for the contract suites that run against every registered plugin: the built-in
 * registry, sample parameters for the types that cannot be created from defaults alone, and
 * seeded instances. Tests only.
 */
import { seededRandom } from "../core/random.ts";
import type { AnyPluginDefinition } from "../plugin/registry.ts";
import type { Plugin, PluginEnvironment } from "../plugin/types.ts";
import { makeEnv } from "../scheduler/framework/testing.ts";
import { createBuiltinRegistry } from "./registry.ts";

/** The built-in registry the contract suites iterate over. */
export const builtinRegistry = createBuiltinRegistry();

/** Parameters for plugin types whose schema has required fields, or whose defaults make tests wait. */
export const SAMPLE_PARAMS: Readonly<Record<string, unknown>> = {
  "utilization-filter": { conditions: [{ metric: "waiting-queue", maxValue: 4 }] },
  "session-id-producer": { headerName: "x-session-id" },
  "priority-holdback-policy": { minCeiling: 0.5 },
  "file-discovery": { path: "endpoints.yaml" },
  "burst-prefix-cache-producer": { windowDurationMs: 1 },
  "endpoint-attribute-filter": {
    attribute: "GPUUtilization",
    producer: "dcgm-extractor",
    algorithm: { type: "threshold", threshold: { operator: "LessThanOrEqual", value: 0.9 } },
  },
  "endpoint-attribute-scorer": {
    attributeKey: "custom.depth",
    algorithm: { type: "linear_lower_is_better" },
  },
};

/** Every registered definition, sorted by type. */
export function builtinDefinitions(): AnyPluginDefinition[] {
  return builtinRegistry.list();
}

/**
 * An environment whose `lookup` creates any built-in type by name (with the same seed), so a
 * plugin referencing a producer by its default name gets a real one.
 */
export function sampleEnv(name: string, seed = 1): PluginEnvironment {
  const lookup = (n: string): Plugin | undefined =>
    builtinRegistry.get(n) ? createSample(n, { seed }) : undefined;
  return { ...makeEnv(name), lookup, random: seededRandom(seed) };
}

/** Options of {@link createSample}. */
export interface SampleOptions {
  /** Seed of the instance's random source (default 1). */
  seed?: number;
  /** Parameters instead of the sample ones. */
  params?: unknown;
}

/** A fresh instance of built-in `type`, named after it, from its sample (or given) parameters. */
export function createSample(type: string, options: SampleOptions = {}): Plugin {
  const definition = builtinRegistry.get(type);
  if (!definition) throw new Error(`no built-in plugin type ${type}`);
  const params = options.params ?? SAMPLE_PARAMS[type] ?? {};
  return definition.create(definition.parameters.parse(params), sampleEnv(type, options.seed));
}
