/**
 * Wires a `FlowController` from a parsed config: every `*PluginRef` names a configured plugin
 * instance (from the EndpointPickerConfig `plugins` list, via `env.lookup`); a ref that names no
 * instance but is a built-in flow-control type gets a default-parameter instance, as llm-d does.
 */
import type { Plugin, PluginEnvironment } from "../plugin/types.ts";
import type { FlowControlConfig } from "./config.ts";
import { FlowController } from "./controller.ts";
import type { FlowObserver } from "./observer.ts";
import { flowControlPlugins } from "./plugins.ts";
import type {
  BandSelectionPolicy,
  EvictionFilter,
  EvictionOrderPolicy,
  FairnessPolicy,
  OrderingPolicy,
  SaturationDetector,
  UsageLimitPolicy,
} from "./types.ts";

interface PolicyKinds {
  fairness: FairnessPolicy;
  ordering: OrderingPolicy;
  "saturation-detector": SaturationDetector;
  "usage-limit": UsageLimitPolicy;
  "band-selection": BandSelectionPolicy;
  "eviction-filter": EvictionFilter;
  "eviction-order": EvictionOrderPolicy;
}

/** A controller and the saturation detector its host should feed it with. */
export interface FlowControlRuntime {
  controller: FlowController;
  detector: SaturationDetector;
}

type Resolve = <K extends keyof PolicyKinds>(ref: string, kind: K, field: string) => PolicyKinds[K];

/**
 * Resolves `*PluginRef`s: a configured instance, else a default-parameter instance of the built-in
 * type of that name (one per ref). Throws (a startup error) when a ref names neither, or names a
 * plugin of the wrong kind.
 */
function pluginResolver(env: Omit<PluginEnvironment, "name">): Resolve {
  const defaults = new Map<string, Plugin>();
  const createDefault = (ref: string): Plugin | undefined => {
    const definition = flowControlPlugins.find((candidate) => candidate.type === ref);
    if (!definition) return undefined;
    const plugin = definition.create(definition.parameters.parse(undefined), { ...env, name: ref });
    defaults.set(ref, plugin);
    return plugin;
  };
  return <K extends keyof PolicyKinds>(ref: string, kind: K, field: string): PolicyKinds[K] => {
    const plugin = env.lookup(ref) ?? defaults.get(ref) ?? createDefault(ref);
    if (!plugin) throw new Error(`flowControl.${field}: no plugin named ${JSON.stringify(ref)}`);
    if ((plugin as { kind?: string }).kind !== kind) {
      throw new Error(
        `flowControl.${field}: plugin ${JSON.stringify(ref)} (${plugin.type}) is not a ${kind} plugin`,
      );
    }
    return plugin as PolicyKinds[K];
  };
}

function detectorOf(config: FlowControlConfig, resolve: Resolve): SaturationDetector {
  return resolve(config.saturationDetector.pluginRef, "saturation-detector", "saturationDetector.pluginRef");
}

/** Only the saturation detector `config` names (llm-d's legacy admission sheds by it). */
export function createSaturationDetector(
  config: FlowControlConfig,
  env: Omit<PluginEnvironment, "name">,
): SaturationDetector {
  return detectorOf(config, pluginResolver(env));
}

/**
 * Builds the controller for `config`. Throws (a startup error) when a ref names neither a
 * configured plugin nor a built-in type, or names a plugin of the wrong kind.
 */
export function createFlowController(
  config: FlowControlConfig,
  env: Omit<PluginEnvironment, "name">,
  observer?: FlowObserver,
): FlowControlRuntime {
  const resolve = pluginResolver(env);
  // Bands for unlisted priorities are created on first use; check their templates' refs now.
  for (const template of [config.defaultPriorityBand, config.defaultNegativePriorityBand]) {
    resolve(template.fairnessPolicyRef, "fairness", "fairnessPolicyRef");
    resolve(template.orderingPolicyRef, "ordering", "orderingPolicyRef");
  }
  const bandSelectionRef = config.bandSelectionPolicyPluginRef;
  const controller = new FlowController({
    config,
    observer,
    policies: {
      fairness: (ref) => resolve(ref, "fairness", "fairnessPolicyRef"),
      ordering: (ref) => resolve(ref, "ordering", "orderingPolicyRef"),
      usageLimit: resolve(config.usageLimitPolicyPluginRef, "usage-limit", "usageLimitPolicyPluginRef"),
      bandSelection: bandSelectionRef
        ? resolve(bandSelectionRef, "band-selection", "bandSelectionPolicyPluginRef")
        : undefined,
      evictionFilter: resolve("sheddable-eviction-filter", "eviction-filter", "enableEviction"),
      evictionOrder: resolve("priority-then-time-eviction-order-policy", "eviction-order", "enableEviction"),
    },
  });
  return { controller, detector: detectorOf(config, resolve) };
}
