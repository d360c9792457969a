/**
 * The registry of every built-in plugin: the scheduling plugins plus flow control's policies and
 * detectors. The config layer knows this registry, never concrete plugins.
 */
import { flowControlPlugins } from "../flow-control/plugins.ts";
import { PluginRegistry } from "../scheduler/framework/registry.ts";
import { schedulingPlugins } from "../scheduler/plugins/index.ts";

/** A fresh registry holding all built-in definitions (cheap: definitions are shared constants). */
export function createBuiltinRegistry(): PluginRegistry {
  return new PluginRegistry([...schedulingPlugins, ...flowControlPlugins]);
}
