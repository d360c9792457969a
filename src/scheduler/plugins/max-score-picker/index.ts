/** `max-score-picker`: the highest-scoring endpoints, ties broken by load then a deterministic rotation. */
import { type PickerParameters, pickerParameters } from "../../../plugin/params.ts";
import { TieBreaker } from "../../framework/tie-break.ts";
import type { Picker, ProfileRunResult, SchedulingContext, ScoredEndpoint } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

class MaxScorePicker implements Picker {
  readonly type = "max-score-picker";
  private readonly ties = new TieBreaker();

  constructor(
    readonly name: string,
    private readonly maxNumOfEndpoints: number,
  ) {}

  pick(ctx: SchedulingContext, scored: ScoredEndpoint[]): ProfileRunResult {
    if (this.maxNumOfEndpoints === 1) {
      const best = this.ties.best(ctx, scored);
      return { targetEndpoints: best < 0 ? [] : [scored[best]!.endpoint], scored };
    }
    const order = this.ties.rank(ctx, scored).slice(0, this.maxNumOfEndpoints);
    return { targetEndpoints: order.map((i) => scored[i]!.endpoint), scored };
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
