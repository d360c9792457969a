/**
 * Public surface of the engine core, for `llmd sim` and the fleet simulator.
 * `createEngine(options)` validates options (throwing `LlmdError("invalid_engine_options")`) and returns
 * a fresh engine; everything else here is for flag parsing, metrics and reporting.
 */
import { PagedEngine } from "./engine.ts";
import { type EngineOptions, resolveEngineOptions } from "./options.ts";

export { blockHashes, chainSeed } from "./block-hash.ts";
export { PagedEngine } from "./engine.ts";
export {
  KV_LINK_NAMES,
  KV_LINKS,
  type KvLink,
  type KvLinkName,
  type KvTransferSize,
  kvTransferMs,
  kvTransferSize,
  promptDigest,
} from "./kv-transfer.ts";
export {
  ENGINE_DEFAULTS,
  type EngineOptions,
  kvCapacityTokens,
  type ProfileTiming,
  type ResolvedEngineOptions,
  resolveEngineOptions,
  type SimpleTiming,
  type TimingOptions,
} from "./options.ts";
export type { SchedulingPolicy } from "./waiting-queue.ts";
export { PROFILE_NAMES, type ProfileName, parseProfileName, resolveProfile } from "./profile.ts";
export type * from "./types.ts";

/** A new engine with `options` (defaults: H200, Llama-3-8B, vLLM's scheduler defaults). */
export function createEngine(options: EngineOptions = {}): PagedEngine {
  return new PagedEngine(resolveEngineOptions(options));
}
