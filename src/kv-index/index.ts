/** KV index: prefix block hashing, the approximate and precise prefix indexes and the match data they publish. */
export {
  blockCount,
  HASH_LANES,
  hashPrefixBlocks,
  hashTextBlocks,
  prefixSeed,
  resumeTextBlocks,
} from "./block-hasher.ts";
export { heldPrefixBlocks } from "./held-block-hashes.ts";
export {
  matchRatio,
  type PrefixCacheMatchInfo,
  type PrefixMatchResult,
  readPrefixMatch,
  uncachedTokens,
} from "./match-info.ts";
export { PrefixIndex } from "./prefix-index.ts";
export {
  DEFAULT_TIERS,
  type IndexKvEvent,
  PreciseIndex,
  type PreciseIndexOptions,
  type PreciseIndexStats,
  type PreciseMatch,
  type TierWeight,
} from "./precise-index.ts";
export { foldKey, RequestKeyHasher } from "./request-keys.ts";
