/**
 * The registry of every built-in plugin: the scheduling plugins, flow control's policies and
 * detectors, and the data layer's sources, extractors and discovery. The config layer knows this registry, never concrete plugins.
 */
import { dataLayerPlugins } from "../endpoints/data-layer/index.ts";
import { flowControlPlugins } from "../flow-control/plugins.ts";
import { PluginRegistry } from "../plugin/registry.ts";
import { schedulingPlugins } from "../scheduler/plugins/index.ts";

/** A fresh registry holding all built-in definitions (cheap: definitions are shared constants). */
export function createBuiltinRegistry(): PluginRegistry {
  return new PluginRegistry([...schedulingPlugins, ...flowControlPlugins, ...dataLayerPlugins]);
}
