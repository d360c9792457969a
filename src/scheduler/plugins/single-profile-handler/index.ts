/** `single-profile-handler`: runs the one configured profile once; its result is primary. */
import { LlmdError } from "../../../api/errors.ts";
import { noParameters } from "../../framework/params.ts";
import type {
  PluginDefinition,
  ProfileHandler,
  ProfileRunResult,
  SchedulerProfile,
  SchedulingContext,
  SchedulingResult,
} from "../../framework/types.ts";

/** Runs the first (only) profile once; other handlers of a single profile extend it. */
export class SingleProfileHandler implements ProfileHandler {
  readonly type: string = "single-profile-handler";
  constructor(readonly name: string) {}

  pickProfiles(
    _ctx: SchedulingContext,
    profiles: ReadonlyMap<string, SchedulerProfile>,
    results: ReadonlyMap<string, ProfileRunResult | null>,
  ): SchedulerProfile[] {
    if (results.size > 0) return [];
    const first = profiles.values().next();
    return first.done ? [] : [first.value];
  }

  processResults(
    _ctx: SchedulingContext,
    results: ReadonlyMap<string, ProfileRunResult | null>,
  ): SchedulingResult | LlmdError {
    for (const [name, result] of results) {
      if (result) return { primaryProfileName: name, profileResults: new Map(results) };
    }
    return new LlmdError("rejected_saturated", "no endpoint passed the scheduling filters", {
      status: 429,
      droppedReason: "rejected-saturated",
    });
  }
}

/** llm-d's default profile handler, auto-added when a config has one profile and no handler. */
export const definition: PluginDefinition<Record<string, never>> = {
  type: "single-profile-handler",
  stability: "beta",
  description: "Runs the single scheduling profile; no endpoint picked → 429 rejected-saturated",
  parameters: noParameters,
  create: (_params, env) => new SingleProfileHandler(env.name),
};
