/**
 * `always-disagg-multimodal-decider` (llm-d): approves the encode stage for a multimodal request,
 * one whose chat messages carry an image, video or audio content part; text-only requests skip it.
 */
import type { SchedulingContext } from "../../framework/types.ts";
import { noParameters } from "../../../plugin/params.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import type { Decider } from "../shared/decider.ts";

/** OpenAI chat content-part types that need an encoder (llm-d's list). */
export const MULTIMODAL_PART_TYPES: ReadonlySet<string> = new Set(["image_url", "video_url", "input_audio"]);

/** True when any chat message's content array holds a multimodal part. */
export function isMultimodal(body: Readonly<Record<string, unknown>>): boolean {
  const messages = body.messages;
  if (!Array.isArray(messages)) return false;
  return messages.some((message: unknown) => {
    const content = (message as { content?: unknown } | null)?.content;
    return Array.isArray(content) && content.some(isMultimodalPart);
  });
}

function isMultimodalPart(part: unknown): boolean {
  const type = (part as { type?: unknown } | null)?.type;
  return typeof type === "string" && MULTIMODAL_PART_TYPES.has(type);
}

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
