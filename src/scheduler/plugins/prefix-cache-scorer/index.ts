/**
 * `prefix-cache-scorer`: prefers endpoints holding more of the prompt's leading blocks, from the
 * `PrefixCacheMatchInfo` a prefix producer published (reference §2.4).
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { matchRatio, readPrefixMatch } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

const parameters = z
  .strictObject({
    prefixMatchInfoProducerName: z.string().min(1).default("approx-prefix-cache-producer"),
    matchLengthWeight: z.number().min(0).max(1).default(0),
    matchLengthScaleTokens: z.int().positive().default(8192),
  })
  .prefault({});

/** Validated parameters of `prefix-cache-scorer`. */
export type PrefixCacheScorerParams = z.infer<typeof parameters>;

/**
 * Score = `w·min(1, matchBlocks·blockSize/scale)² + (1−w)·matchBlocks/totalBlocks`, in [0,1];
 * 0 for an endpoint without match information. With tiers (the precise producer), the ratio
 * counts each matched block at its tier's weight.
 */
export class PrefixCacheScorer implements Scorer {
  readonly type = "prefix-cache-scorer";
  readonly category = "affinity";
  /** State key of the consumed producer's match; also read by `no-hit-lru-scorer`. */
  readonly prefixMatchStateKey: string;

  constructor(
    readonly name: string,
    private readonly params: PrefixCacheScorerParams,
  ) {
    this.prefixMatchStateKey = attributeKey(PREFIX_CACHE_MATCH_INFO, params.prefixMatchInfoProducerName);
  }

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const scores = new Float64Array(endpoints.length);
    const match = readPrefixMatch(ctx.state, this.prefixMatchStateKey);
    if (!match) return scores;
    const { matchLengthWeight: w, matchLengthScaleTokens: scale } = this.params;
    for (let i = 0; i < endpoints.length; i++) {
      const info = match.byEndpoint.get(endpoints[i]!.metadata.key);
      if (!info || info.totalBlocks === 0) continue;
      const ratio = matchRatio(info);
      const length = Math.min(1, (info.matchBlocks * info.blockSizeTokens) / scale);
      scores[i] = w * length * length + (1 - w) * ratio;
    }
    return scores;
  }
}

/** Registry entry for `prefix-cache-scorer`. */
export const definition: PluginDefinition<PrefixCacheScorerParams> = {
  type: "prefix-cache-scorer",
  stability: "beta",
  description: "Scores endpoints by the fraction of the prompt's prefix blocks they hold",
  parameters,
  consumes: [PREFIX_CACHE_MATCH_INFO],
  create: (params, env) => new PrefixCacheScorer(env.name, params),
};
