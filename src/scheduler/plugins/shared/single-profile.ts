/** The single-profile handler's behaviour, which handlers of a single profile extend. */
import { LlmdError } from "../../../api/errors.ts";
import type {
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
    results: Map<string, ProfileRunResult | null>,
  ): SchedulingResult | LlmdError {
    for (const [name, result] of results) {
      if (result) return { primaryProfileName: name, profileResults: results };
    }
    return new LlmdError("no_endpoint_picked", "no endpoint passed the scheduling filters");
  }
}
