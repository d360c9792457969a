/**
 * The built-in scheduling plugins: one list, loaded into a PluginRegistry by the config layer
 * (src/config/registry.ts). Nothing registers itself on import.
 *
 * Convention for a plugin folder src/scheduler/plugins/<type>/:
 *   index.ts    `export const definition: PluginDefinition<Params> = { type: "<type>", stability, description,
 *               parameters: <zod strict object>, create(params, env) { … }, produces?, consumes? }`
 *   index.test.ts  its llm-d semantics;  README.md  5–15 lines.
 * Add it here as `import { definition as camelCaseType } from "./<type>/index.ts";` and list it below.
 * Data keys and attribute shapes shared between producers and consumers: ../framework/data-keys.ts.
 * Test helpers (endpoints, contexts, envs): ../framework/testing.ts.
 */
import type { AnyPluginDefinition } from "../framework/registry.ts";

/** Every built-in scheduling plugin definition (order is irrelevant; `llmd plugins` sorts by type). */
export const schedulingPlugins: readonly AnyPluginDefinition[] = [];
