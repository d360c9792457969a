/** `always-disagg-pd-decider` (llm-d): approves the prefill stage for every request. */
import { noParameters } from "../../../plugin/params.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import type { Decider } from "../shared/decider.ts";

class AlwaysDisaggPdDecider implements Decider {
  readonly type = "always-disagg-pd-decider";
  constructor(readonly name: string) {}

  disaggregate(): boolean {
    return true;
  }
}

/** Registry entry for `always-disagg-pd-decider`. */
export const definition: PluginDefinition<Record<string, never>> = {
  type: "always-disagg-pd-decider",
  stability: "beta",
  description: "P/D decider: always runs the prefill stage (disagg-profile-handler deciders.prefill)",
  parameters: noParameters,
  create: (_params, env) => new AlwaysDisaggPdDecider(env.name),
};
