/**
 * `prefix-based-pd-decider` (llm-d): disaggregates a request only when the part of its prompt the
 * chosen decode endpoint does not hold is long enough to pay for the KV transfer. It reads the
 * `PrefixCacheMatchInfo` the approximate prefix producer published for the decode endpoint.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { readPrefixMatch } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import type { SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import type { Decider } from "../shared/decider.ts";

const count = () =>
  z
    .number({ error: "expected a non-negative integer" })
    .int({ error: "expected a non-negative integer" })
    .nonnegative({ error: "expected a non-negative integer" })
    .default(0);

const parameters = z
  .strictObject({
    /** Uncached prompt tokens needed to disaggregate; 0 disables P/D (llm-d). */
    nonCachedTokens: count(),
    /** Minimum prompt length in tokens; 0 = no prompt-length gate (llm-d). */
    promptTokens: count(),
  })
  .prefault({});

/** Validated parameters of `prefix-based-pd-decider`. */
export type PrefixBasedPdDeciderParams = z.output<typeof parameters>;

/** The decider; `stateKey` is where the default prefix producer publishes its match. */
export class PrefixBasedPdDecider implements Decider {
  readonly type = "prefix-based-pd-decider";
  private readonly stateKey = attributeKey(PREFIX_CACHE_MATCH_INFO);

  constructor(
    readonly name: string,
    readonly params: PrefixBasedPdDeciderParams,
  ) {}

  /**
   * True iff `nonCachedTokens` > 0, the prompt passes the `promptTokens` gate, and prompt tokens
   * minus the tokens cached on `endpoint` ≥ `nonCachedTokens`. No match information for the
   * endpoint means no P/D, as in llm-d (the prefix state is unknown, not empty).
   */
  disaggregate(ctx: SchedulingContext, endpoint: Endpoint | undefined): boolean {
    const { nonCachedTokens, promptTokens } = this.params;
    if (nonCachedTokens === 0 || !endpoint) return false;
    const match = readPrefixMatch(ctx.state, this.stateKey);
    const info = match?.byEndpoint.get(endpoint.metadata.key);
    if (!match || !info) return false;
    // The host's count when it has one (the fleet's workloads), else the producer's.
    const inputTokens = ctx.request.tokens?.length ?? ctx.request.inputTokens ?? match.promptTokens;
    if (promptTokens > 0 && inputTokens < promptTokens) return false;
    const cachedTokens = info.matchBlocks * info.blockSizeTokens;
    return inputTokens - cachedTokens >= nonCachedTokens;
  }
}

/** Registry entry for `prefix-based-pd-decider`. */
export const definition: PluginDefinition<PrefixBasedPdDeciderParams> = {
  type: "prefix-based-pd-decider",
  stability: "beta",
  description: "P/D decider: runs prefill when the decode endpoint's uncached prompt part ≥ nonCachedTokens",
  parameters,
  consumes: [PREFIX_CACHE_MATCH_INFO],
  create: (params, env) => new PrefixBasedPdDecider(env.name, params),
};
