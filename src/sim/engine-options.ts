/**
 * Maps `llmd sim` flags onto the engine's options. Timing rule: any llm-d-inference-sim latency flag
 * selects its simple latency model; otherwise the measured profile (`--profile`, default
 * h200-llama3-8b) prices each step. Unset sizes fall back to the engine's vLLM-like defaults
 * (KV capacity derived from the profile's GPU memory, context = the model's native window).
 */
import type { EngineOptions, SimpleTiming, TimingOptions } from "../engine/index.ts";
import type { SimConfig } from "./config.ts";

const LATENCY_KEYS = [
  "time-to-first-token",
  "time-to-first-token-std-dev",
  "inter-token-latency",
  "inter-token-latency-std-dev",
  "prefill-overhead",
  "prefill-time-per-token",
  "prefill-time-std-dev",
  "latency-calculator",
  "time-factor-under-load",
] as const;

/** Engine options equivalent to `config`. */
export function toEngineOptions(config: SimConfig, seed: number): EngineOptions {
  return {
    profile: config.profile,
    blockSize: config["block-size"],
    kvCacheSize: config["kv-cache-size"],
    maxNumSeqs: config["max-num-seqs"],
    maxNumBatchedTokens: config["max-num-batched-tokens"],
    longPrefillTokenThreshold: config["long-prefill-token-threshold"],
    maxModelLen: config["max-model-len"],
    cpuOffloadGb: config["cpu-offload-gb"],
    schedulingPolicy: config["scheduling-policy"],
    timing: timingOptions(config),
    seed,
  };
}

function timingOptions(config: SimConfig): TimingOptions {
  if (!LATENCY_KEYS.some((k) => config[k] !== undefined && config[k] !== "")) return { kind: "profile" };
  const calculator = config["latency-calculator"];
  const timing: SimpleTiming = {
    kind: "simple",
    latencyCalculator: calculator === "" ? undefined : calculator,
    timeToFirstTokenMs: config["time-to-first-token"],
    timeToFirstTokenStdDevMs: config["time-to-first-token-std-dev"],
    interTokenLatencyMs: config["inter-token-latency"],
    interTokenLatencyStdDevMs: config["inter-token-latency-std-dev"],
    prefillOverheadMs: config["prefill-overhead"],
    prefillTimePerTokenMs: config["prefill-time-per-token"],
    prefillTimeStdDevMs: config["prefill-time-std-dev"],
    timeFactorUnderLoad: config["time-factor-under-load"],
  };
  return timing;
}
