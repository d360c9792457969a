/**
 * Plugin-test helpers on top of ../framework/testing.ts (endpoints, contexts, environments):
 * instantiating a definition from raw parameters and building a decision. Tests and benches only.
 */
import type { Endpoint } from "../../endpoints/endpoint.ts";
import { makeEnv } from "../framework/testing.ts";
import type { SchedulingResult } from "../framework/types.ts";
import type { Plugin, PluginDefinition, PluginEnvironment } from "../../plugin/types.ts";

/** Validates raw `params` with the definition's schema and creates an instance named after its type. */
export function instantiate<T extends Plugin, P = unknown>(
  definition: PluginDefinition<P>,
  params: unknown = {},
  env: PluginEnvironment = makeEnv(definition.type),
): T {
  return definition.create(definition.parameters.parse(params), env) as T;
}

/** A single-profile result (`default`, primary) that picked `endpoints`, best first. */
export function resultFor(...endpoints: Endpoint[]): SchedulingResult {
  return {
    primaryProfileName: "default",
    profileResults: new Map([["default", { targetEndpoints: endpoints, scored: [] }]]),
  };
}
