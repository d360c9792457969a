/** `single-profile-handler`: runs the one configured profile once; its result is primary. */
import { noParameters } from "../../../plugin/params.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { SingleProfileHandler } from "../shared/single-profile.ts";

/** llm-d's default profile handler, auto-added when a config has one profile and no handler. */
export const definition: PluginDefinition<Record<string, never>> = {
  type: "single-profile-handler",
  stability: "beta",
  description: "Runs the single scheduling profile; no endpoint picked → 429 rejected-saturated",
  parameters: noParameters,
  create: (_params, env) => new SingleProfileHandler(env.name),
};
