/**
 * `mm-embeddings-cache-scorer` (llm-d, beta): prefers endpoints that already encoded the request's
 * media items: matched items / total items, from `mm-embeddings-cache-producer`; 0 without a match.
 */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { noParameters } from "../../../plugin/params.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import {
  attributeKey,
  ENCODER_CACHE_MATCH_INFO,
  type EncoderCacheMatchInfo,
} from "../../framework/data-keys.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";

const STATE_KEY = attributeKey(ENCODER_CACHE_MATCH_INFO);

class MmEmbeddingsCacheScorer implements Scorer {
  readonly type = "mm-embeddings-cache-scorer";
  readonly category = "affinity";
  constructor(readonly name: string) {}

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const scores = new Float64Array(endpoints.length);
    const match = ctx.state.get(STATE_KEY) as ReadonlyMap<string, EncoderCacheMatchInfo> | undefined;
    if (!match) return scores;
    for (let i = 0; i < endpoints.length; i++) {
      const info = match.get(endpoints[i]!.metadata.key);
      if (info && info.totalItems > 0) scores[i] = info.matchedItems / info.totalItems;
    }
    return scores;
  }
}

/** Registry entry for `mm-embeddings-cache-scorer`. */
export const definition: PluginDefinition<Record<string, never>> = {
  type: "mm-embeddings-cache-scorer",
  stability: "beta",
  description: "Scores endpoints by the fraction of the request's media items they already encoded",
  parameters: noParameters,
  consumes: [ENCODER_CACHE_MATCH_INFO],
  create: (_params, env) => new MmEmbeddingsCacheScorer(env.name),
};
