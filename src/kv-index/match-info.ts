/**
 * What a prefix-match producer (approximate or precise) publishes for one scheduling cycle, and
 * how consumers (prefix-cache scorer, affinity filter, in-flight load, P/D decider) read it.
 * A producer stores one `PrefixMatchResult` per request in `ctx.state` (not on the shared endpoint
 * objects, so interleaved requests cannot see each other's matches) under a key its consumers
 * derive from the producer's instance name (the framework's `attributeKey`).
 */

/**
 * llm-d's `PrefixCacheMatchInfo` for one endpoint (same shape as the framework's data key value):
 * leading blocks held contiguously from the start, blocks considered, tokens per block.
 */
export interface PrefixCacheMatchInfo {
  matchBlocks: number;
  totalBlocks: number;
  blockSizeTokens: number;
  /**
   * The matched blocks weighted by the device tier holding each (GPU 1.0, CPU 0.8…), when the
   * producer knows tiers (the precise index); scorers prefer it to `matchBlocks`.
   */
  weightedMatchBlocks?: number;
}

/** One producer's output for one request. */
export interface PrefixMatchResult {
  /** Tokens per block used for hashing. */
  blockSizeTokens: number;
  /** Prompt length in tokens (uncapped). */
  promptTokens: number;
  /**
   * Chained block hashes considered: all `totalBlocks` of them, or at least those any endpoint
   * matched and the next (the approximate producer hashes a prompt no endpoint holds past its
   * first blocks only for its insert, after dispatch; the precise producer its matched blocks).
   */
  hashes: Float64Array;
  /** Match per endpoint key; endpoints absent here have no information. */
  byEndpoint: Map<string, PrefixCacheMatchInfo>;
}

/** Reads the prefix match stored in `state` under `stateKey`, if any. */
export function readPrefixMatch(
  state: ReadonlyMap<string, unknown>,
  stateKey: string,
): PrefixMatchResult | undefined {
  const value = state.get(stateKey);
  if (value && typeof value === "object" && "byEndpoint" in value && "hashes" in value) {
    return value as PrefixMatchResult;
  }
  return undefined;
}

/** Matched fraction of the prompt's blocks on one endpoint (tier-weighted when known), in [0,1]; 0 without information. */
export function matchRatio(info: PrefixCacheMatchInfo | undefined): number {
  if (!info || info.totalBlocks === 0) return 0;
  return (info.weightedMatchBlocks ?? info.matchBlocks) / info.totalBlocks;
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
