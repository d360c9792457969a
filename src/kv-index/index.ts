/** KV index: prefix block hashing, the approximate prefix index and the match data it publishes. */
export { blockCount, hashPrefixBlocks, hashTextBlocks, prefixSeed } from "./block-hasher.ts";
export {
  matchRatio,
  type PrefixCacheMatchInfo,
  type PrefixMatchResult,
  readPrefixMatch,
  uncachedTokens,
} from "./match-info.ts";
export { PrefixIndex } from "./prefix-index.ts";
