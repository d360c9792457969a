/**
 * `round-robin-picker`: cycles through the candidates in endpoint-key order, ignoring scores (the
 * GIE conformance EPP's policy; a baseline for the fleet simulator). Not an llm-d plugin type.
 */
import { type PickerParameters, pickerParameters } from "../../../plugin/params.ts";
import type { Picker, ProfileRunResult, SchedulingContext, ScoredEndpoint } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

class RoundRobinPicker implements Picker {
  readonly type = "round-robin-picker";
  /** Next turn per profile, so profiles sharing this picker each get the whole cycle. */
  private readonly turns = new Map<string, number>();

  constructor(
    readonly name: string,
    private readonly maxNumOfEndpoints: number,
  ) {}

  pick(_ctx: SchedulingContext, scored: ScoredEndpoint[], profile = ""): ProfileRunResult {
    // Key order, not arrival order of the candidate list, so filtering does not reshuffle the cycle.
    const order = scored.map((_, i) => i);
    order.sort((a, b) => (scored[a]!.endpoint.metadata.key < scored[b]!.endpoint.metadata.key ? -1 : 1));
    const k = Math.min(this.maxNumOfEndpoints, order.length);
    const turn = this.turns.get(profile) ?? 0;
    this.turns.set(profile, turn + 1);
    const start = order.length > 0 ? turn % order.length : 0;
    const targetEndpoints = [];
    for (let i = 0; i < k; i++) targetEndpoints.push(scored[order[(start + i) % order.length]!]!.endpoint);
    return { targetEndpoints, scored };
  }
}

/** `maxNumOfEndpoints` (default 1) consecutive endpoints of a rotating cycle. */
export const definition: PluginDefinition<PickerParameters> = {
  type: "round-robin-picker",
  stability: "alpha",
  description: "Cycles through endpoints in key order, ignoring scores (baseline)",
  parameters: pickerParameters,
  create: (params, env) => new RoundRobinPicker(env.name, params.maxNumOfEndpoints),
};
