/** `random-picker`: uniformly random endpoints, ignoring scores. */
import { type PickerParameters, pickerParameters } from "../../../plugin/params.ts";
import type { Picker, ProfileRunResult, SchedulingContext, ScoredEndpoint } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

class RandomPicker implements Picker {
  readonly type = "random-picker";

  constructor(
    readonly name: string,
    private readonly maxNumOfEndpoints: number,
    private readonly random: () => number,
  ) {}

  pick(_ctx: SchedulingContext, scored: ScoredEndpoint[]): ProfileRunResult {
    // Partial Fisher–Yates over an index array: `k` distinct picks without touching `scored`.
    const order = scored.map((_, i) => i);
    const k = Math.min(this.maxNumOfEndpoints, order.length);
    for (let i = 0; i < k; i++) {
      const j = i + Math.floor(this.random() * (order.length - i));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    return { targetEndpoints: order.slice(0, k).map((i) => scored[i]!.endpoint), scored };
  }
}

/** `maxNumOfEndpoints` (default 1) distinct endpoints chosen uniformly at random (env.random). */
export const definition: PluginDefinition<PickerParameters> = {
  type: "random-picker",
  stability: "beta",
  description: "Picks uniformly at random, ignoring scores",
  parameters: pickerParameters,
  create: (params, env) => new RandomPicker(env.name, params.maxNumOfEndpoints, env.random ?? Math.random),
};
