/**
 * The decider contract of `disagg-profile-handler` (llm-d's deciderPlugin): a plugin the handler
 * references by instance name in `parameters.deciders.{prefill,encode}` and asks, per request,
 * whether that stage runs. Deciders bind to no extension point of their own.
 */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { SchedulingContext } from "../../framework/types.ts";
import type { Plugin, PluginEnvironment } from "../../../plugin/types.ts";

/** Says whether a disaggregation stage runs for this request. */
export interface Decider extends Plugin {
  /**
   * True to run the stage. `endpoint` is the decode pick in decode-first order; undefined when the
   * stage is decided before decode ran (encode in prefill-first order).
   */
  disaggregate(ctx: SchedulingContext, endpoint: Endpoint | undefined): boolean;
}

/** True when the plugin implements `disaggregate`. */
export function isDecider(plugin: Plugin): plugin is Decider {
  return typeof (plugin as unknown as Record<string, unknown>).disaggregate === "function";
}

/** The decider named `name` (a parameter at `field`); throws a config error if missing or not one. */
export function resolveDecider(env: PluginEnvironment, field: string, name: string | undefined) {
  if (name === undefined) return undefined;
  const plugin = env.lookup(name);
  if (!plugin) throw new Error(`${field}: no plugin named "${name}" is configured`);
  if (!isDecider(plugin)) throw new Error(`${field}: plugin "${name}" (${plugin.type}) is not a decider`);
  return plugin;
}
