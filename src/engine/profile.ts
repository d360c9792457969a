/**
 * The measured H200 operator profile (src/engine/profiles/h200.json, a copy of
 * shared/data/gpu-profile/h200.json) and its model shapes. Data, not a model: timing.ts composes it.
 */
import { readFileSync } from "node:fs";
import type { TokenizerName } from "../tokenizer/registry.ts";

/** Names of the model shapes measured in the profile, as accepted by `--profile`. */
export const PROFILE_NAMES = ["h200-llama3-8b", "h200-qwen3-32b-tp2", "h200-llama3-70b-tp4"] as const;

/** One of {@link PROFILE_NAMES}. */
export type ProfileName = (typeof PROFILE_NAMES)[number];

/** One model shape as measured on one GPU (`tp` = the tensor-parallel degree it was cut for). */
export interface ModelShape {
  hidden: number;
  heads: number;
  kv_heads: number;
  head_dim: number;
  intermediate: number;
  layers: number;
  tp: number;
  /** K and V bytes per token, all layers, bf16, for the KV heads one GPU holds. */
  kv_bytes_per_token: number;
  /** Weight bytes of one decoder layer on one GPU. */
  layer_weight_bytes: number;
  /** `"T"` → ms of one layer's linear part for T batched tokens. */
  linear_ms_per_layer: Record<string, number>;
  /** `"causal:N"` / `"prefix:N:P"` → ms per layer. */
  attn_prefill_ms_per_layer: Record<string, number>;
  /** `"B:L"` → ms per layer of one decode step of B sequences of L context tokens. */
  attn_decode_ms_per_layer: Record<string, number>;
}

/** The whole profile file. */
export interface GpuProfile {
  device: string;
  d2h_2MiB_blocks_gbps: number;
  h2d_pinned_gbps: number;
  models: Record<string, ModelShape>;
  e2e_llama3_8b_hf: Record<string, number>;
}

/** A resolved profile: the GPU-wide numbers plus the chosen model shape. */
export interface ResolvedProfile {
  name: ProfileName;
  gpu: GpuProfile;
  model: ModelShape;
  /** Context length the model supports natively (the default `maxModelLen`). */
  nativeMaxModelLen: number;
}

const MODEL_KEY: Record<ProfileName, string> = {
  "h200-llama3-8b": "llama3-8b",
  "h200-qwen3-32b-tp2": "qwen3-32b-tp2",
  "h200-llama3-70b-tp4": "llama3-70b-tp4",
};

/** Llama 3.1/3.3 support 128 Ki tokens; Qwen3-32B's native window is 40,960. */
const NATIVE_MAX_MODEL_LEN: Record<ProfileName, number> = {
  "h200-llama3-8b": 131072,
  "h200-qwen3-32b-tp2": 40960,
  "h200-llama3-70b-tp4": 131072,
};

/**
 * The tokenizer each profile's model uses, by registry name. Qwen3's tokenizer is not bundled, so
 * its profile keeps the stand-in.
 */
export const PROFILE_TOKENIZER: Record<ProfileName, TokenizerName> = {
  "h200-llama3-8b": "llama3.1",
  "h200-qwen3-32b-tp2": "char4",
  "h200-llama3-70b-tp4": "llama3.1",
};

let cached: GpuProfile | undefined;

/** The H200 profile, parsed once. */
export function h200Profile(): GpuProfile {
  cached ??= JSON.parse(readFileSync(new URL("./profiles/h200.json", import.meta.url), "utf8")) as GpuProfile;
  return cached;
}

/** Parses a profile name; also accepts the bare model key (`llama3-8b`). Null when unknown. */
export function parseProfileName(name: string): ProfileName | null {
  const direct = PROFILE_NAMES.find((p) => p === name);
  if (direct) return direct;
  return PROFILE_NAMES.find((p) => MODEL_KEY[p] === name) ?? null;
}

/** Resolves a profile name to its model shape. */
export function resolveProfile(name: ProfileName): ResolvedProfile {
  const gpu = h200Profile();
  const model = gpu.models[MODEL_KEY[name]];
  if (!model) throw new Error(`profile ${name}: model ${MODEL_KEY[name]} missing from h200.json`);
  return { name, gpu, model, nativeMaxModelLen: NATIVE_MAX_MODEL_LEN[name] };
}
