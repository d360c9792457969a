/**
 * Profile phase of config loading: builds the scheduling profiles (llm-d defaulting: a `default`
 * profile of every listed filter/scorer/picker when none are given, `max-score-picker` in profiles
 * without a picker, `single-profile-handler` for one profile without handler) and binds every
 * instance to the extension points it implements.
 */
import {
  isDataProducer,
  isFilter,
  isPicker,
  isPreRequest,
  isProfileHandler,
  isRequestHeaderProcessor,
  isResponseHooks,
  isScorer,
  isScreener,
} from "../scheduler/framework/guards.ts";
import type { SchedulerParts } from "../scheduler/framework/scheduler.ts";
import type {
  DataProducer,
  Filter,
  Picker,
  ProfileHandler,
  SchedulerProfile,
  Scorer,
} from "../scheduler/framework/types.ts";
import type { Plugin } from "../plugin/types.ts";
import type { InstantiateOptions, PluginSet } from "./instantiate.ts";
import type { ConfigIssue } from "./issues.ts";
import type { ProfileSpec } from "./schema.ts";

const DEFAULT_PICKER = "max-score-picker";
const DEFAULT_HANDLER = "single-profile-handler";

/** Creates a default plugin from the registry with its default parameters (and given overrides). */
function createDefault(
  type: string,
  set: PluginSet,
  options: InstantiateOptions,
  params: object = {},
): Plugin {
  const definition = options.registry.get(type);
  if (!definition) throw new Error(`default plugin ${type} is not registered`);
  return definition.create(definition.parameters.parse(params), {
    name: type,
    clock: options.clock,
    tokenizer: options.tokenizer,
    lookup: (n) => set.instances.get(n),
    ...(options.random ? { random: options.random } : {}),
  });
}

function defaultProfileSpec(set: PluginSet): ProfileSpec {
  const plugins = [...set.instances]
    .filter(([, p]) => isFilter(p) || isScorer(p) || isPicker(p))
    .map(([pluginRef]) => ({ pluginRef }));
  return { name: "default", plugins };
}

function buildProfile(
  spec: ProfileSpec,
  path: string,
  set: PluginSet,
  options: InstantiateOptions,
  issues: ConfigIssue[],
): SchedulerProfile {
  const filters: Filter[] = [];
  const scorers: { scorer: Scorer; weight: number }[] = [];
  let picker: Picker | undefined;
  spec.plugins.forEach(({ pluginRef, weight }, j) => {
    const at = `${path}.plugins[${j}].pluginRef`;
    const plugin = set.instances.get(pluginRef);
    if (!plugin) {
      issues.push({ path: at, message: `no plugin named "${pluginRef}" in plugins` });
      return;
    }
    if (!isFilter(plugin) && !isScorer(plugin) && !isPicker(plugin)) {
      issues.push({
        path: at,
        message: `plugin "${pluginRef}" (${plugin.type}) is not a filter, scorer or picker`,
      });
      return;
    }
    if (isFilter(plugin)) filters.push(plugin);
    if (isScorer(plugin)) scorers.push({ scorer: plugin, weight: weight ?? 1 });
    if (isPicker(plugin)) {
      if (picker)
        issues.push({
          path: at,
          message: `profile "${spec.name}" has more than one picker ("${picker.name}", "${pluginRef}")`,
        });
      picker = plugin;
    }
  });
  picker ??= createDefault(DEFAULT_PICKER, set, options, { maxNumOfEndpoints: 1 }) as Picker;
  return { name: spec.name, filters, scorers, picker };
}

/** Producers ordered so each runs after the producers of the data keys it consumes (stable). */
export function orderProducers(producers: readonly DataProducer[], set: PluginSet): DataProducer[] {
  const keysOf = (p: Plugin, field: "produces" | "consumes" | "uses") =>
    set.resolved.get(p.name)?.definition[field] ?? [];
  const reads = (p: Plugin) => [...keysOf(p, "consumes"), ...keysOf(p, "uses")];
  const ordered: DataProducer[] = [];
  const pending = [...producers];
  while (pending.length > 0) {
    const ready = pending.findIndex((p) =>
      reads(p).every((key) => !pending.some((q) => q !== p && keysOf(q, "produces").includes(key))),
    );
    // A dependency cycle cannot be ordered: fall back to config order for the rest.
    ordered.push(...pending.splice(Math.max(ready, 0), ready < 0 ? pending.length : 1));
  }
  return ordered;
}

function pickHandler(
  set: PluginSet,
  profileCount: number,
  options: InstantiateOptions,
  issues: ConfigIssue[],
) {
  const handlers = [...set.instances.values()].filter(isProfileHandler);
  if (handlers.length > 1) {
    issues.push({
      path: "plugins",
      message: `only one profile handler is allowed, found ${handlers.map((h) => `"${h.name}"`).join(", ")}`,
    });
  }
  if (handlers[0]) return handlers[0];
  if (profileCount === 1) return createDefault(DEFAULT_HANDLER, set, options) as ProfileHandler;
  issues.push({
    path: "schedulingProfiles",
    message: `${profileCount} profiles need a profile handler in plugins`,
  });
  return undefined;
}

/** Builds the scheduler's parts from the instances and profile specs, or returns the issues. */
export function buildSchedulerParts(
  profileSpecs: readonly ProfileSpec[] | undefined,
  set: PluginSet,
  options: InstantiateOptions,
): SchedulerParts | ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const specs = profileSpecs ?? [defaultProfileSpec(set)];
  if (specs.length === 0)
    issues.push({ path: "schedulingProfiles", message: "expected at least one profile" });
  const profiles = new Map<string, SchedulerProfile>();
  specs.forEach((spec, i) => {
    const path = profileSpecs ? `schedulingProfiles[${i}]` : "schedulingProfiles(default)";
    if (profiles.has(spec.name))
      issues.push({ path: `${path}.name`, message: `duplicate profile name "${spec.name}"` });
    profiles.set(spec.name, buildProfile(spec, path, set, options, issues));
  });
  const profileHandler = pickHandler(set, specs.length, options, issues);
  if (!profileHandler || issues.length > 0) return issues;
  const all = [...set.instances.values()];
  return {
    profileHandler,
    profiles,
    headerProcessors: all.filter(isRequestHeaderProcessor),
    screeners: all.filter(isScreener),
    producers: orderProducers(all.filter(isDataProducer), set),
    preRequests: all.filter(isPreRequest),
    responseHooks: all.filter(isResponseHooks),
  };
}
