/**
 * `always-disagg-multimodal-decider` (llm-d): approves the encode stage for a multimodal request,
 * one whose chat messages carry an image, video or audio content part; text-only requests skip it.
 */
import type { SchedulingContext } from "../../framework/types.ts";
import { noParameters } from "../../../plugin/params.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import type { Decider } from "../shared/decider.ts";
import { isMultimodal } from "../shared/multimodal.ts";

class AlwaysDisaggMultimodalDecider implements Decider {
  readonly type = "always-disagg-multimodal-decider";
  constructor(readonly name: string) {}

  disaggregate(ctx: SchedulingContext): boolean {
    return isMultimodal(ctx.request.body);
  }
}

/** Registry entry for `always-disagg-multimodal-decider`. */
export const definition: PluginDefinition<Record<string, never>> = {
  type: "always-disagg-multimodal-decider",
  stability: "beta",
  description: "Encode decider: runs the encode stage for chat requests with image, video or audio parts",
  parameters: noParameters,
  create: (_params, env) => new AlwaysDisaggMultimodalDecider(env.name),
};
