/**
 * Plugin phase of config loading: resolve each `plugins[]` entry against the registry (planned and
 * unknown types, stability gating, parameter validation), auto-add the default producers of data
 * nobody produces, then create the instances (lazily, so a plugin may look up one listed later).
 */
import type { Clock } from "../core/clock.ts";
import { DEFAULT_PRODUCERS } from "../scheduler/framework/data-keys.ts";
import type { AnyPluginDefinition, PluginRegistry } from "../plugin/registry.ts";
import type { Plugin, PluginEnvironment } from "../plugin/types.ts";
import type { Tokenizer } from "../tokenizer/tokenizer.ts";
import { type ConfigIssue, fromZodIssues } from "./issues.ts";
import { PLANNED_PLUGINS } from "./planned-plugins.ts";
import type { PluginSpec } from "./schema.ts";

/** What plugin factories get from the loader. */
export interface InstantiateOptions {
  registry: PluginRegistry;
  allowExperimentalPlugins: boolean;
  clock: Clock;
  tokenizer: Tokenizer;
  random?: () => number;
}

/** A plugin entry after resolution: its definition and validated parameters. */
export interface ResolvedPlugin {
  name: string;
  definition: AnyPluginDefinition;
  params: unknown;
  /** Path of the entry in the config, or `(auto)` for defaults the loader added. */
  path: string;
}

/** Instances by name in config order (auto-added ones last) and their resolved entries. */
export interface PluginSet {
  instances: Map<string, Plugin>;
  resolved: Map<string, ResolvedPlugin>;
}

function resolveEntry(
  spec: PluginSpec,
  path: string,
  options: InstantiateOptions,
  issues: ConfigIssue[],
  warnings: string[],
): ResolvedPlugin | undefined {
  const name = spec.name ?? spec.type;
  const definition = options.registry.get(spec.type);
  if (!definition) {
    const plan = PLANNED_PLUGINS.get(spec.type);
    const message = plan
      ? `plugin "${name}": type "${spec.type}" is not implemented in llmd (${plan})`
      : `plugin "${name}": unknown plugin type "${spec.type}" (run \`llmd plugins\` for the list)`;
    issues.push({ path: `${path}.type`, message, ...(plan ? { unimplementedType: spec.type } : {}) });
    return undefined;
  }
  if (options.registry.isAlias(spec.type)) {
    warnings.push(`${path}: plugin type "${spec.type}" is deprecated, use "${definition.type}"`);
  } else if (definition.stability === "deprecated") {
    warnings.push(`${path}: plugin type "${spec.type}" is deprecated`);
  }
  if (definition.stability === "alpha" && !options.allowExperimentalPlugins) {
    issues.push({
      path: `${path}.type`,
      message: `plugin "${name}": type "${spec.type}" is alpha; enable it with --allow-experimental-plugins`,
    });
  }
  const parsed = definition.parameters.safeParse(spec.parameters ?? {}, { reportInput: true });
  if (!parsed.success) {
    issues.push(...fromZodIssues(`${path}.parameters`, parsed.error.issues));
    return undefined;
  }
  return { name, definition, params: parsed.data, path };
}

/** Adds the default producer of every consumed data key that no configured plugin produces. */
function addDefaultProducers(
  resolved: Map<string, ResolvedPlugin>,
  options: InstantiateOptions,
  warnings: string[],
): void {
  for (let changed = true; changed; ) {
    changed = false;
    const produced = new Set([...resolved.values()].flatMap((r) => r.definition.produces ?? []));
    const missing = [...resolved.values()]
      .flatMap((r) => r.definition.consumes ?? [])
      .filter((k) => !produced.has(k));
    for (const key of new Set(missing)) {
      const type = DEFAULT_PRODUCERS[key];
      const definition = type ? options.registry.get(type) : undefined;
      if (!type || !definition || resolved.has(type)) {
        warnings.push(`no plugin produces "${key}" and its default producer is unavailable`);
        continue;
      }
      resolved.set(type, { name: type, definition, params: definition.parameters.parse({}), path: "(auto)" });
      changed = true;
    }
  }
}

/** Creates every resolved plugin; a plugin may `lookup` any other by name (cycles are issues). */
function createAll(
  resolved: Map<string, ResolvedPlugin>,
  options: InstantiateOptions,
  issues: ConfigIssue[],
): Map<string, Plugin> {
  const instances = new Map<string, Plugin>();
  const creating = new Set<string>();
  const create = (name: string): Plugin | undefined => {
    const done = instances.get(name);
    if (done) return done;
    const entry = resolved.get(name);
    if (!entry || creating.has(name)) return undefined;
    creating.add(name);
    const env: PluginEnvironment = {
      name,
      clock: options.clock,
      tokenizer: options.tokenizer,
      lookup: create,
      ...(options.random ? { random: options.random } : {}),
    };
    try {
      instances.set(name, entry.definition.create(entry.params, env));
    } catch (err) {
      issues.push({
        path: entry.path,
        message: `plugin "${name}": ${err instanceof Error ? err.message : String(err)}`,
      });
    }
    creating.delete(name);
    return instances.get(name);
  };
  for (const name of resolved.keys()) create(name);
  // Keep config order regardless of the order lookups created them in.
  return new Map([...resolved.keys()].filter((n) => instances.has(n)).map((n) => [n, instances.get(n)!]));
}

/** Resolves and creates the plugins of a config, or returns every issue found. */
export function instantiatePlugins(
  specs: readonly PluginSpec[],
  options: InstantiateOptions,
  warnings: string[],
): PluginSet | ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const resolved = new Map<string, ResolvedPlugin>();
  specs.forEach((spec, i) => {
    const path = `plugins[${i}]`;
    const name = spec.name ?? spec.type;
    if (resolved.has(name) || specs.slice(0, i).some((s) => (s.name ?? s.type) === name)) {
      issues.push({ path: `${path}.name`, message: `duplicate plugin name "${name}"` });
      return;
    }
    const entry = resolveEntry(spec, path, options, issues, warnings);
    if (entry) resolved.set(name, entry);
  });
  if (issues.length > 0) return issues;
  addDefaultProducers(resolved, options, warnings);
  const instances = createAll(resolved, options, issues);
  return issues.length > 0 ? issues : { instances, resolved };
}
