/** `max-score-picker`: the highest-scoring endpoints, ties broken by load then a deterministic rotation. */
import { type PickerParameters, pickerParameters } from "../../../plugin/params.ts";
import { TieBreaker } from "../../framework/tie-break.ts";
import type { Picker, ProfileRunResult, SchedulingContext, ScoredEndpoint } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

class MaxScorePicker implements Picker {
  readonly type = "max-score-picker";
  private readonly ties = new Map<string, TieBreaker>();

  constructor(
    readonly name: string,
    private readonly maxNumOfEndpoints: number,
  ) {}

  pick(ctx: SchedulingContext, scored: ScoredEndpoint[], profile = ""): ProfileRunResult {
    const ties = this.tieBreaker(profile);
    if (this.maxNumOfEndpoints === 1) {
      const best = ties.best(ctx, scored);
      return { targetEndpoints: best < 0 ? [] : [scored[best]!.endpoint], scored };
    }
    const order = ties.rank(ctx, scored).slice(0, this.maxNumOfEndpoints);
    return { targetEndpoints: order.map((i) => scored[i]!.endpoint), scored };
  }

  /** The profile's own rotation, so profiles sharing this picker do not step each other's turn. */
  private tieBreaker(profile: string): TieBreaker {
    let ties = this.ties.get(profile);
    if (!ties) this.ties.set(profile, (ties = new TieBreaker()));
    return ties;
  }
}

/** Top `maxNumOfEndpoints` (default 1) by score; equal scores → least loaded → rotating order. */
export const definition: PluginDefinition<PickerParameters> = {
  type: "max-score-picker",
  stability: "beta",
  description: "Picks the highest total score; ties go to the least loaded, then rotate deterministically",
  parameters: pickerParameters,
  create: (params, env) => new MaxScorePicker(env.name, params.maxNumOfEndpoints),
};
