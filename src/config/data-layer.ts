/**
 * Data-layer phase of config loading: checks the `dataLayer` wiring (sources feed extractors they
 * can read, discovery names a discovery plugin), injects llm-d's default metrics source and
 * extractor when `injectDefaults` is on, and selects the instances that configure the endpoint
 * pool (see pool-options.ts). Runs after references.ts has checked that every ref names a plugin.
 */
import {
  DEFAULT_METRICS_EXTRACTOR,
  DEFAULT_METRICS_SOURCE,
  isPoolDataLayerPlugin,
  type PoolDataLayerPlugin,
} from "../endpoints/data-layer/index.ts";
import type { InstantiateOptions, PluginSet } from "./instantiate.ts";
import type { ConfigIssue } from "./issues.ts";
import type { DataLayerConfig } from "./schema.ts";

/** The data-layer instances a loaded config applies to the endpoint pool. */
export interface DataLayerSelection {
  /** The `dataLayer.discovery.endpoints` plugin, when the config names one. */
  readonly discovery: PoolDataLayerPlugin | undefined;
  /** Sources and their extractors, in the order they configure the pool. */
  readonly pipeline: readonly PoolDataLayerPlugin[];
  /** False when no metrics source and extractor are in effect: the pool then only health-probes. */
  readonly metrics: boolean;
}

const DEFAULT_DATA_LAYER: DataLayerConfig = { injectDefaults: true, sources: [] };

/** Resolves the data layer, adding injected defaults to `set.instances`; returns issues on bad wiring. */
export function resolveDataLayer(
  section: DataLayerConfig | undefined,
  set: PluginSet,
  options: InstantiateOptions,
  warnings: string[],
): DataLayerSelection | ConfigIssue[] {
  const dl = section ?? DEFAULT_DATA_LAYER;
  const issues: ConfigIssue[] = [];
  const wired = wiredSources(dl, set, issues);
  const discovery = discoveryPlugin(dl, set, issues, warnings);
  const metricsSources = wired.filter((w) => w.source.type === DEFAULT_METRICS_SOURCE);
  if (metricsSources.length > 1)
    issues.push({
      path: "dataLayer.sources",
      message: `llmd's endpoint pool runs one ${DEFAULT_METRICS_SOURCE}, found ${metricsSources.length}`,
    });
  if (issues.length > 0) return issues;
  const pipeline = wired.flatMap((w) => [w.source, ...w.extractors]);
  const metrics = metricsPipeline(dl.injectDefaults, metricsSources[0], set, options, issues);
  pipeline.push(...metrics.filter((p) => !pipeline.includes(p)));
  if (issues.length > 0) return issues;
  warnUnused(set, new Set<PoolDataLayerPlugin | undefined>([...pipeline, discovery]), warnings);
  const hasExtractor = metrics.some((p) => p.type === DEFAULT_METRICS_EXTRACTOR);
  return { discovery, pipeline, metrics: hasExtractor };
}

interface WiredSource {
  source: PoolDataLayerPlugin;
  extractors: PoolDataLayerPlugin[];
}

function wiredSources(dl: DataLayerConfig, set: PluginSet, issues: ConfigIssue[]): WiredSource[] {
  const wired: WiredSource[] = [];
  dl.sources.forEach((entry, i) => {
    const path = `dataLayer.sources[${i}]`;
    const source = dataLayerPlugin(set, entry.pluginRef, "data-source", `${path}.pluginRef`, issues);
    if (!source) return;
    const extractors: PoolDataLayerPlugin[] = [];
    entry.extractors.forEach(({ pluginRef }, j) => {
      const at = `${path}.extractors[${j}].pluginRef`;
      const extractor = set.instances.get(pluginRef);
      if (!extractor) return;
      if (!source.accepts(extractor)) {
        issues.push({
          path: at,
          message: `plugin "${pluginRef}" (${extractor.type}) cannot read what "${source.name}" (${source.type}) fetches`,
        });
      } else if (isPoolDataLayerPlugin(extractor)) {
        extractors.push(extractor);
        source.feed?.(extractor);
      }
    });
    wired.push({ source, extractors });
  });
  return wired;
}

/** The plugin `ref` as a data-layer plugin of `kind`; missing refs were reported by references.ts. */
function dataLayerPlugin(
  set: PluginSet,
  ref: string,
  kind: PoolDataLayerPlugin["dataLayerKind"],
  path: string,
  issues: ConfigIssue[],
): PoolDataLayerPlugin | undefined {
  const plugin = set.instances.get(ref);
  if (!plugin) return undefined;
  if (isPoolDataLayerPlugin(plugin) && plugin.dataLayerKind === kind) return plugin;
  issues.push({ path, message: `plugin "${ref}" (${plugin.type}) is not a ${kind} plugin` });
  return undefined;
}

function discoveryPlugin(
  dl: DataLayerConfig,
  set: PluginSet,
  issues: ConfigIssue[],
  warnings: string[],
): PoolDataLayerPlugin | undefined {
  if (dl.discovery?.peers)
    warnings.push("dataLayer.discovery.peers: ignored (llmd runs one router replica, no peer discovery)");
  if (dl.crossReplica)
    warnings.push("dataLayer.crossReplica: ignored (llmd runs one router replica, nothing to sync)");
  const ref = dl.discovery?.endpoints?.pluginRef;
  if (ref === undefined) return undefined;
  return dataLayerPlugin(set, ref, "discovery", "dataLayer.discovery.endpoints.pluginRef", issues);
}

/**
 * The metrics source and extractor in effect: the wired source with its extractors, else (when
 * injecting defaults) the listed instance of each default type or a new default one.
 */
function metricsPipeline(
  injectDefaults: boolean,
  wired: WiredSource | undefined,
  set: PluginSet,
  options: InstantiateOptions,
  issues: ConfigIssue[],
): PoolDataLayerPlugin[] {
  const chosen = wired ? [wired.source, ...wired.extractors] : [];
  if (!injectDefaults) return chosen;
  for (const type of [DEFAULT_METRICS_SOURCE, DEFAULT_METRICS_EXTRACTOR]) {
    if (chosen.some((p) => p.type === type)) continue;
    const plugin = listedOfType(set, type) ?? injectDefault(type, set, options, issues);
    if (plugin) chosen.push(plugin);
  }
  return chosen;
}

function listedOfType(set: PluginSet, type: string): PoolDataLayerPlugin | undefined {
  for (const plugin of set.instances.values())
    if (plugin.type === type && isPoolDataLayerPlugin(plugin)) return plugin;
  return undefined;
}

function injectDefault(
  type: string,
  set: PluginSet,
  options: InstantiateOptions,
  issues: ConfigIssue[],
): PoolDataLayerPlugin | undefined {
  const definition = options.registry.get(type);
  if (!definition) return undefined;
  if (set.instances.has(type)) {
    issues.push({
      path: "dataLayer.injectDefaults",
      message: `cannot inject ${type}: a plugin of another type is named "${type}"`,
    });
    return undefined;
  }
  const env = {
    name: type,
    clock: options.clock,
    tokenizer: options.tokenizer,
    lookup: (n: string) => set.instances.get(n),
  };
  const plugin = definition.create(definition.parameters.parse({}), env);
  set.instances.set(type, plugin);
  return isPoolDataLayerPlugin(plugin) ? plugin : undefined;
}

function warnUnused(set: PluginSet, used: Set<PoolDataLayerPlugin | undefined>, warnings: string[]): void {
  for (const [name, plugin] of set.instances) {
    if (!isPoolDataLayerPlugin(plugin) || used.has(plugin)) continue;
    const at = set.resolved.get(name)?.path ?? name;
    warnings.push(`${at}: plugin "${name}" (${plugin.type}) is not wired in dataLayer; it has no effect`);
  }
}
