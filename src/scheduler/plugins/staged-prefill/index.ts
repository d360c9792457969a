/**
 * `staged-prefill` (llmd): a long cold prompt is prefilled on its endpoint in stages, so that it
 * does not hold the endpoint for its whole prefill. vLLM's chunked prefill gives a running prefill
 * the step's whole token budget, so a turn that arrives behind a 100K-token cold prompt waits for
 * all of it, seconds to minutes, though its own prefix is cached there. Staged, the host sends the
 * prompt's leading tokens up to each cut as a one-token request, one after another, then the
 * request itself; each stage finds the one before cached, and what arrived meanwhile runs between
 * stages. A stage is planned only when the host can cut the prompt where the engine's tokens are
 * cut: the router knows the engine's ids (`exactTokens`), or the prompt is a completions prompt of
 * text (cut at a space); the endpoint has nothing else waiting for its prefill (the router's
 * in-flight view) and KV to spare; and the request is decoded where it is prefilled (one
 * profile's target, no P/D).
 */
import { z } from "zod";
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
import { promptTokenCount } from "../shared/prompt-pieces.ts";
import type { Tokenizer } from "../../../tokenizer/tokenizer.ts";

const COMPLETIONS = "/v1/completions";

/** True when the host can stage `request`: its ids are the engine's, or it is a completions prompt of text. */
function stageable(request: SchedulingRequest): boolean {
  if (request.tokens && request.exactTokens) return true;
  return request.path === COMPLETIONS && typeof request.body.prompt === "string";
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
    if (!stageable(ctx.request) || chosen.length !== 1) return;
    const load = readEndpointLoad(ctx.state, this.loadKey, chosen[0]!.metadata.key);
    const { minUncachedTokens, maxQueuedTokens, stageTokens } = this.params;
    if (load.requestUncachedTokens < minUncachedTokens || load.tokens > maxQueuedTokens) return;
    if (chosen[0]!.metrics.kvCacheUsagePercent >= this.params.maxKvCacheUsage) return;
    const promptTokens = promptTokenCount(ctx.request, this.tokenizer);
    const cachedTokens = promptTokens - load.requestUncachedTokens;
    const cuts = stageCuts(promptTokens, cachedTokens, stageTokens);
    if (cuts.length > 0)
      ctx.state.set(STAGED_PREFILL_STATE_KEY, { cuts, promptTokens, cachedTokens } satisfies StagedPrefill);
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
