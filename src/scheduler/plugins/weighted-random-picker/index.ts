/** `weighted-random-picker`: random endpoints with probability proportional to score (A-Res sampling). */
import { type PickerParameters, pickerParameters } from "../../../plugin/params.ts";
import type { Picker, ProfileRunResult, SchedulingContext, ScoredEndpoint } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

class WeightedRandomPicker implements Picker {
  readonly type = "weighted-random-picker";

  constructor(
    readonly name: string,
    private readonly maxNumOfEndpoints: number,
    private readonly random: () => number,
  ) {}

  pick(_ctx: SchedulingContext, scored: ScoredEndpoint[]): ProfileRunResult {
    const anyPositive = scored.some((s) => s.score > 0);
    // Efraimidis–Spirakis A-Res: key = U^(1/w), keep the largest keys. With no positive score,
    // every key is plain U: a uniform pick, as llm-d does.
    const keyed = scored.map((s, i) => {
      const u = this.random();
      const key = !anyPositive ? u : s.score > 0 ? u ** (1 / s.score) : -1;
      return { i, key };
    });
    keyed.sort((a, b) => b.key - a.key);
    const k = Math.min(this.maxNumOfEndpoints, keyed.length);
    return { targetEndpoints: keyed.slice(0, k).map(({ i }) => scored[i]!.endpoint), scored };
  }
}

/** `maxNumOfEndpoints` (default 1) endpoints sampled without replacement, weight = score. */
export const definition: PluginDefinition<PickerParameters> = {
  type: "weighted-random-picker",
  stability: "beta",
  description: "Samples endpoints with probability proportional to score (A-Res); all ≤ 0 → uniform",
  parameters: pickerParameters,
  create: (params, env) =>
    new WeightedRandomPicker(env.name, params.maxNumOfEndpoints, env.random ?? Math.random),
};
