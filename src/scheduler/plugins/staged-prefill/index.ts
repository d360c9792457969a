/**
 * `staged-prefill` (llmd): a long cold prompt is prefilled on its endpoint in stages, so that it
 * does not hold the endpoint for its whole prefill. vLLM's chunked prefill gives a running prefill
 * the step's whole token budget, so a turn that arrives behind a 100K-token cold prompt waits for
 * all of it, seconds to minutes, though its own prefix is cached there. Staged, the host sends the
 * prompt's leading tokens up to each cut as a one-token request, one after another, then the
 * request itself; each stage finds the one before cached, and what arrived meanwhile runs between
 * stages. A stage is planned only when the host can cut the prompt where the engine's tokens are
 * cut: the router knows the engine's ids (`exactTokens`), the prompt is a completions prompt of
 * text (cut at a space), or a chat of several messages (cut after a message, which the server
 * renders without the generation prompt as the start of the whole); the endpoint has nothing
 * else waiting for its prefill (the router's in-flight view) and KV to spare; and the request is
 * decoded where it is prefilled (one profile's target, no P/D).
 */
import { z } from "zod";
import {
  CHAT_GENERATION_PROMPT,
  type ChatMessageLike,
  contentUnits,
  renderedMessageUnits,
} from "../../../api/prompt.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { IN_FLIGHT_LOAD, STAGED_PREFILL_STATE_KEY, type StagedPrefill } from "../../framework/data-keys.ts";
import type {
  PreRequest,
  SchedulingContext,
  SchedulingRequest,
  SchedulingResult,
} from "../../framework/types.ts";
import { chosenEndpoints } from "../shared/chosen-endpoints.ts";
import { inFlightStateKey, readEndpointLoad } from "../shared/inflight-load.ts";
import { chatMessages, promptTokenCount } from "../shared/prompt-pieces.ts";
import type { Tokenizer } from "../../../tokenizer/tokenizer.ts";

const COMPLETIONS = "/v1/completions";

/**
 * How the host can stage `request`: as the engine's ids, as a completions prompt's text, as a
 * chat's leading messages, or not at all.
 */
function stagingOf(request: SchedulingRequest): "ids" | "text" | "messages" | null {
  if (request.tokens && request.exactTokens) return "ids";
  if (request.path === COMPLETIONS && typeof request.body.prompt === "string") return "text";
  const messages = chatMessages(request);
  return messages && messages.length > 1 ? "messages" : null;
}

/**
 * The message boundaries nearest below `cuts` (each above the last and above `cached`, leaving
 * the request its last message), with where they end in the prompt's `promptTokens`: a message
 * ends at its share of the rendered chat's code units.
 */
export function messageCuts(
  messages: readonly ChatMessageLike[],
  cuts: readonly number[],
  promptTokens: number,
  cached: number,
): { cuts: number[]; messages: number[] } {
  const ends: number[] = [];
  let units = 0;
  for (const m of messages) {
    units += renderedMessageUnits(m.role, contentUnits(m.content));
    ends.push(units);
  }
  const total = units + CHAT_GENERATION_PROMPT.length;
  const out = { cuts: [] as number[], messages: [] as number[] };
  let k = 0;
  for (const cut of cuts) {
    while (k + 1 < messages.length - 1 && tokensAt(ends[k + 1]!) <= cut) k++;
    const end = tokensAt(ends[k]!);
    if (end <= cut && end > (out.cuts.at(-1) ?? cached)) {
      out.cuts.push(end);
      out.messages.push(k + 1);
    }
  }
  return out;

  function tokensAt(unit: number): number {
    return Math.floor((unit / total) * promptTokens);
  }
}

/** Cuts fall on multiples of this many tokens, so every stage ends on a whole block of any vLLM block size. */
const CUT_ALIGNMENT = 256;

const parameters = z
  .strictObject({
    /** New tokens a stage prefills. */
    stageTokens: z.int().min(CUT_ALIGNMENT).default(32768),
    /** Only prompts with at least this many uncached tokens on their endpoint are staged. */
    minUncachedTokens: z.int().positive().default(49152),
    /** Stage only while other requests' uncached prompt tokens in flight to the endpoint are at most this. */
    maxQueuedTokens: z.int().nonnegative().default(0),
    /**
     * Stage only while the endpoint's KV-cache usage (last scrape) is below this: between stages a
     * prompt's blocks are unreferenced, and an endpoint short of KV evicts them before the next.
     */
    maxKvCacheUsage: z.number().gt(0).max(1).default(0.75),
    inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
  })
  .prefault({});

/** Validated parameters of `staged-prefill`. */
export type StagedPrefillParams = z.infer<typeof parameters>;

/**
 * The cuts of a prompt of `length` tokens with `cached` of them cached: every `stageTokens` new
 * tokens, aligned down, leaving the request itself at least half a stage.
 */
export function stageCuts(length: number, cached: number, stageTokens: number): number[] {
  const cuts: number[] = [];
  for (let end = cached + stageTokens; end <= length - stageTokens / 2; end += stageTokens) {
    const cut = end - (end % CUT_ALIGNMENT);
    if (cut > (cuts.at(-1) ?? cached)) cuts.push(cut);
  }
  return cuts;
}

class StagedPrefillPlanner implements PreRequest {
  readonly type = "staged-prefill";
  private readonly loadKey: string;

  constructor(
    readonly name: string,
    private readonly params: StagedPrefillParams,
    private readonly tokenizer: Tokenizer,
  ) {
    this.loadKey = inFlightStateKey(params.inFlightLoadProducerName);
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    const chosen = chosenEndpoints(result);
    const staging = stagingOf(ctx.request);
    if (staging === null || chosen.length !== 1) return;
    const load = readEndpointLoad(ctx.state, this.loadKey, chosen[0]!.metadata.key);
    const { minUncachedTokens, maxQueuedTokens, stageTokens } = this.params;
    if (load.requestUncachedTokens < minUncachedTokens || load.tokens > maxQueuedTokens) return;
    if (chosen[0]!.metrics.kvCacheUsagePercent >= this.params.maxKvCacheUsage) return;
    const promptTokens = promptTokenCount(ctx.request, this.tokenizer);
    const cachedTokens = promptTokens - load.requestUncachedTokens;
    const cuts = stageCuts(promptTokens, cachedTokens, stageTokens);
    const plan: StagedPrefill =
      staging === "messages"
        ? {
            ...messageCuts(chatMessages(ctx.request)!, cuts, promptTokens, cachedTokens),
            promptTokens,
            cachedTokens,
          }
        : { cuts, promptTokens, cachedTokens };
    if (plan.cuts.length > 0) ctx.state.set(STAGED_PREFILL_STATE_KEY, plan);
  }
}

/** Registry entry for `staged-prefill`. */
export const definition: PluginDefinition<StagedPrefillParams> = {
  type: "staged-prefill",
  stability: "beta",
  description:
    "Prefills a long cold prompt in one-token stages on its endpoint, so turns behind it run between them",
  parameters,
  consumes: [IN_FLIGHT_LOAD],
  create: (p, env) => new StagedPrefillPlanner(env.name, p, env.tokenizer),
};
