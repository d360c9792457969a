/**
 * What a prefix-match producer (approximate or precise) publishes for one scheduling cycle, and
 * how consumers (prefix-cache scorer, affinity filter, in-flight load, P/D decider) read it.
 * A producer stores one `PrefixMatchResult` in `ctx.state` under its instance name.
 */

/** llm-d's `PrefixCacheMatchInfo` for one endpoint. */
export interface PrefixCacheMatchInfo {
  /** Leading blocks of the prompt this endpoint holds (contiguous from the start). */
  matchBlocks: number;
  /** Blocks of the prompt considered (capped by the producer's match limit). */
  totalBlocks: number;
  /** Tokens per block. */
  blockSizeTokens: number;
}

/** One producer's output for one request. */
export interface PrefixMatchResult {
  /** Tokens per block used for hashing. */
  blockSizeTokens: number;
  /** Prompt length in tokens (uncapped). */
  promptTokens: number;
  /** Chained block hashes considered (length = totalBlocks); reused by the optimistic insert. */
  hashes: Float64Array;
  /** Match per endpoint key; endpoints absent here have no information. */
  byEndpoint: Map<string, PrefixCacheMatchInfo>;
}

/** Default producer instance name consumers read from. */
export const DEFAULT_PREFIX_PRODUCER = "approx-prefix-cache-producer";

/** Reads the prefix match a producer stored in `state`, if any. */
export function readPrefixMatch(
  state: ReadonlyMap<string, unknown>,
  producerName: string,
): PrefixMatchResult | undefined {
  const value = state.get(producerName);
  if (value && typeof value === "object" && "byEndpoint" in value && "hashes" in value) {
    return value as PrefixMatchResult;
  }
  return undefined;
}

/** Matched fraction of the prompt's blocks on one endpoint, in [0,1]; 0 without information. */
export function matchRatio(info: PrefixCacheMatchInfo | undefined): number {
  if (!info || info.totalBlocks === 0) return 0;
  return info.matchBlocks / info.totalBlocks;
}

/**
 * Prompt tokens `endpointKey` would still have to prefill: prompt length minus its cached
 * leading blocks, ≥ 0. Without match information the whole prompt is uncached.
 */
export function uncachedTokens(
  match: PrefixMatchResult | undefined,
  endpointKey: string,
  promptTokens: number,
) {
  const info = match?.byEndpoint.get(endpointKey);
  if (!info) return promptTokens;
  return Math.max(0, promptTokens - info.matchBlocks * info.blockSizeTokens);
}
