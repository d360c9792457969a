/**
 * Engine options: names mirror vLLM / llm-d-inference-sim flags, camelCased. `resolveEngineOptions`
 * fills defaults, validates, and derives the KV capacities every host needs.
 */
import { LlmdError } from "../api/errors.ts";
import type { SchedulingPolicy } from "./waiting-queue.ts";
import { type ProfileName, parseProfileName, type ResolvedProfile, resolveProfile } from "./profile.ts";

/** The profile composition from the measured H200 data (default). */
export interface ProfileTiming {
  kind: "profile";
}

/**
 * llm-d-inference-sim's latency models, all in ms. `per-token`: prefill = prefillOverheadMs +
 * uncached·prefillTimePerTokenMs; `constant`: prefill = timeToFirstTokenMs. Decode = interTokenLatencyMs per
 * token. GPU-bound terms scale by up to `timeFactorUnderLoad` when maxNumSeqs requests run. Std-devs are
 * clamped to 30% of their mean and samples to ±70%, as in the sim.
 */
export interface SimpleTiming {
  kind: "simple";
  latencyCalculator?: "constant" | "per-token";
  timeToFirstTokenMs?: number;
  timeToFirstTokenStdDevMs?: number;
  interTokenLatencyMs?: number;
  interTokenLatencyStdDevMs?: number;
  prefillOverheadMs?: number;
  prefillTimePerTokenMs?: number;
  prefillTimeStdDevMs?: number;
  /** ≥ 1. */
  timeFactorUnderLoad?: number;
}

/** Timing model selection. */
export type TimingOptions = ProfileTiming | SimpleTiming;

/** Everything optional; see {@link ENGINE_DEFAULTS}. Sizes in GB are decimal (1e9 bytes). */
export interface EngineOptions {
  profile?: ProfileName | string;
  /** Tokens per KV block, 8..128. */
  blockSize?: number;
  /** GPU KV blocks; overrides the capacity derived from the profile. */
  kvCacheSize?: number;
  /** Fraction of GPU memory vLLM may use, (0, 1]. */
  gpuMemoryUtilization?: number;
  /** GPU memory per GPU in GB. */
  gpuMemoryGb?: number;
  maxNumSeqs?: number;
  /** Token budget of one step (prefill chunks + decodes). */
  maxNumBatchedTokens?: number;
  /**
   * vLLM's `--long-prefill-token-threshold`: a request takes at most this many tokens of a step,
   * so the rest of the budget starts the requests queued behind a long prompt (0 = no cap).
   */
  longPrefillTokenThreshold?: number;
  /** Longest prompt + output accepted; default is the model's native window. */
  maxModelLen?: number;
  enablePrefixCaching?: boolean;
  timing?: TimingOptions;
  /** CPU offload tier size in GB (0 = off). */
  cpuOffloadGb?: number;
  /** CPU→GPU reload rate in GB/s (measured block-wise D2H on the H200: 52). */
  cpuOffloadGBps?: number;
  /** Storage offload tier size in GB (0 = off). */
  storageOffloadGb?: number;
  /** Storage→GPU reload rate in GB/s (assumed: one NVMe Gen4 x4 drive, ≈7 GB/s). */
  storageOffloadGBps?: number;
  /** Fixed CPU cost per step in ms (scheduler, sampling, detokenisation with CUDA graphs on). */
  stepOverheadMs?: number;
  /** Tensor-parallel all-reduce bus bandwidth in GB/s (assumed NVLink 4 NCCL bus rate). */
  allReduceGBps?: number;
  /** Fixed latency of one all-reduce in µs. */
  allReduceLatencyUs?: number;
  /** Seed of the only random thing (simple-timing jitter). */
  seed?: number;
  /**
   * vLLM's `--scheduling-policy`: `fcfs` admits in arrival order and preempts the newest running
   * request; `priority` orders by (request priority, arrival) and preempts the lowest-priority one.
   */
  schedulingPolicy?: SchedulingPolicy;
}

/** Fully resolved options plus derived sizes. */
export interface ResolvedEngineOptions
  extends Required<Omit<EngineOptions, "profile" | "kvCacheSize" | "maxModelLen" | "timing">> {
  profile: ResolvedProfile;
  timing: TimingOptions;
  maxModelLen: number;
  /** GPU KV blocks. */
  numGpuBlocks: number;
  /** CPU-tier blocks (0 = tier off). */
  numCpuBlocks: number;
  /** Storage-tier blocks (0 = tier off). */
  numStorageBlocks: number;
  /** Bytes of one KV block on one GPU. */
  blockBytes: number;
}

/** Defaults of every scalar option. */
export const ENGINE_DEFAULTS = {
  profile: "h200-llama3-8b" as ProfileName,
  blockSize: 16,
  gpuMemoryUtilization: 0.9,
  gpuMemoryGb: 141,
  maxNumSeqs: 256,
  maxNumBatchedTokens: 8192,
  longPrefillTokenThreshold: 0,
  enablePrefixCaching: true,
  cpuOffloadGb: 0,
  cpuOffloadGBps: 52,
  storageOffloadGb: 0,
  storageOffloadGBps: 7,
  stepOverheadMs: 2,
  allReduceGBps: 360,
  allReduceLatencyUs: 8,
  seed: 1,
  schedulingPolicy: "fcfs" as SchedulingPolicy,
} as const;

/**
 * KV tokens one replica holds by the profile's rule:
 * (gpuMemory·utilization − layers·layerWeightBytes) / kvBytesPerToken, floored, ≥ 0.
 */
export function kvCapacityTokens(
  profile: ResolvedProfile,
  gpuMemoryGb: number = ENGINE_DEFAULTS.gpuMemoryGb,
  gpuMemoryUtilization: number = ENGINE_DEFAULTS.gpuMemoryUtilization,
): number {
  const m = profile.model;
  const free = gpuMemoryGb * 1e9 * gpuMemoryUtilization - m.layers * m.layer_weight_bytes;
  return Math.max(0, Math.floor(free / m.kv_bytes_per_token));
}

/** Fills defaults and validates; throws `LlmdError("invalid_engine_options")` naming the field. */
export function resolveEngineOptions(options: EngineOptions = {}): ResolvedEngineOptions {
  const o = { ...ENGINE_DEFAULTS, ...stripUndefined(options) };
  const name = parseProfileName(String(o.profile));
  if (!name) fail("profile", `unknown profile ${o.profile}`);
  const profile = resolveProfile(name);
  checkInt("blockSize", o.blockSize, 8, 128);
  checkRange("gpuMemoryUtilization", o.gpuMemoryUtilization, 1e-6, 1);
  checkRange("gpuMemoryGb", o.gpuMemoryGb, 1e-6, 1e6);
  checkInt("maxNumSeqs", o.maxNumSeqs, 1, 1e6);
  checkInt("maxNumBatchedTokens", o.maxNumBatchedTokens, 1, 1e8);
  checkInt("longPrefillTokenThreshold", o.longPrefillTokenThreshold, 0, 1e8);
  if (o.schedulingPolicy !== "fcfs" && o.schedulingPolicy !== "priority") {
    fail("schedulingPolicy", `expected fcfs or priority, got ${o.schedulingPolicy}`);
  }
  for (const k of ["cpuOffloadGb", "storageOffloadGb", "stepOverheadMs", "allReduceLatencyUs"] as const) {
    checkRange(k, o[k], 0, 1e9);
  }
  for (const k of ["cpuOffloadGBps", "storageOffloadGBps", "allReduceGBps"] as const) {
    checkRange(k, o[k], 1e-9, 1e9);
  }
  const blockBytes = profile.model.kv_bytes_per_token * o.blockSize;
  const derivedBlocks = Math.floor(
    kvCapacityTokens(profile, o.gpuMemoryGb, o.gpuMemoryUtilization) / o.blockSize,
  );
  const numGpuBlocks = options.kvCacheSize ?? derivedBlocks;
  checkInt("kvCacheSize", numGpuBlocks, 1, 1e9);
  const maxModelLen = options.maxModelLen ?? profile.nativeMaxModelLen;
  checkInt("maxModelLen", maxModelLen, 1, 1e9);
  const timing = options.timing ?? { kind: "profile" };
  validateTiming(timing);
  return {
    ...o,
    profile,
    timing,
    maxModelLen,
    numGpuBlocks,
    numCpuBlocks: Math.floor((o.cpuOffloadGb * 1e9) / blockBytes),
    numStorageBlocks: Math.floor((o.storageOffloadGb * 1e9) / blockBytes),
    blockBytes,
  };
}

function validateTiming(t: TimingOptions): void {
  if (t.kind === "profile") return;
  const ms = [
    "timeToFirstTokenMs",
    "interTokenLatencyMs",
    "prefillOverheadMs",
    "prefillTimePerTokenMs",
  ] as const;
  for (const k of ms) if (t[k] !== undefined) checkRange(`timing.${k}`, t[k], 0, 1e9);
  if (t.timeFactorUnderLoad !== undefined)
    checkRange("timing.timeFactorUnderLoad", t.timeFactorUnderLoad, 1, 1e6);
}

function stripUndefined(o: EngineOptions): Partial<typeof ENGINE_DEFAULTS> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function checkInt(field: string, v: number, min: number, max: number): void {
  if (!Number.isInteger(v)) fail(field, `expected an integer, got ${v}`);
  checkRange(field, v, min, max);
}

function checkRange(field: string, v: number, min: number, max: number): void {
  if (typeof v !== "number" || !(v >= min && v <= max)) fail(field, `expected ${min}..${max}, got ${v}`);
}

function fail(field: string, message: string): never {
  throw new LlmdError("invalid_engine_options", `${field}: ${message}`, { param: field });
}
