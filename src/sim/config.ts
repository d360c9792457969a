/**
 * `llmd sim` configuration: one zod schema over llm-d-inference-sim's kebab-case keys, shared by the
 * command-line flags and the `--config` YAML file (flags override the file). Durations accept Go
 * strings ("2000ms", "50us", "1.5s") or numbers in milliseconds.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { TOKENIZER_NAMES } from "../tokenizer/registry.ts";
import {
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_HEADER_TIMEOUT_MS,
  DEFAULT_MAX_INFLIGHT_BODY_BYTES,
} from "../api/request-body.ts";
import { KV_LINK_NAMES } from "../engine/kv-transfer.ts";
import { kvEventsConfigSchema } from "./kv-events-config.ts";
import { kvTransferConfigSchema } from "./kv-transfer-config.ts";

const GO_DURATION = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };

/** Parses a Go duration string ("1m30s", "50us") or a bare number of milliseconds; NaN if malformed. */
export function parseDurationMs(text: string): number {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  let total = 0;
  let consumed = 0;
  GO_DURATION.lastIndex = 0;
  for (let m = GO_DURATION.exec(trimmed); m !== null; m = GO_DURATION.exec(trimmed)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    consumed = GO_DURATION.lastIndex;
  }
  return consumed === trimmed.length && consumed > 0 ? total : Number.NaN;
}

const duration = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const ms = typeof v === "number" ? v : parseDurationMs(v);
  if (!Number.isFinite(ms) || ms < 0) {
    ctx.addIssue({ code: "custom", message: `expected a duration like "20ms", got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return ms;
});

/** A duration whose bare number means seconds (`drain-timeout`, as the router's flag). */
const durationOrSeconds = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const seconds = typeof v === "number" || /^\s*\d+(\.\d+)?\s*$/.test(v);
  const ms = seconds ? Number(v) * 1000 : parseDurationMs(v);
  if (!Number.isFinite(ms) || ms < 0) {
    ctx.addIssue({ code: "custom", message: `expected a duration like "30s", got ${JSON.stringify(v)}` });
    return z.NEVER;
  }
  return ms;
});

/** A timeout: a duration > 0 (bare numbers are seconds). */
const positiveDuration = durationOrSeconds.refine((ms) => ms > 0, "expected a duration > 0");

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const stringList = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (typeof v === "string" ? [v] : v));

/** Error kinds `--failure-types` may inject (llm-d-inference-sim's names). */
export const FAILURE_TYPES = [
  "rate_limit",
  "invalid_api_key",
  "context_length",
  "server_error",
  "invalid_request",
  "model_not_found",
] as const;

const loraModule = z.union([z.string(), z.object({ name: z.string() }).loose()]).transform((v, ctx) => {
  if (typeof v !== "string") return v.name;
  try {
    const name = (JSON.parse(v) as { name?: unknown }).name;
    if (typeof name === "string") return name;
  } catch {}
  ctx.addIssue({ code: "custom", message: `expected '{"name":…}', got ${v}` });
  return z.NEVER;
});

/**
 * llm-d-inference-sim keys accepted for compatibility and ignored (their features are not simulated);
 * any other unknown key is an error.
 */
export const IGNORED_KEYS = [
  "enable-kvcache",
  "hash-seed",
  "zmq-endpoint",
  "event-batch-size",
  "max-cpu-loras",
  "kv-cache-transfer-latency",
  "kv-cache-transfer-latency-std-dev",
  "kv-cache-transfer-time-per-token",
  "kv-cache-transfer-time-std-dev",
  "enable-prefix-caching",
  "tensor-parallel-size",
  "enforce-eager",
] as const;

/** The schema; keys are the flag names. */
export const simConfigSchema = z
  .object({
    port: int(0, 65535).default(8000),
    host: z.string().default("0.0.0.0"),
    model: z.string().min(1),
    "served-model-name": stringList.optional(),
    "lora-modules": z.array(loraModule).default([]),
    "max-loras": int(1).default(1),
    "max-num-seqs": int(1).optional(),
    "max-num-batched-tokens": int(1).optional(),
    "long-prefill-token-threshold": int(0).optional(),
    "max-model-len": int(1).optional(),
    "max-waiting-queue-length": int(1).default(1000),
    "block-size": z.coerce
      .number()
      .refine((n) => [8, 16, 32, 64, 128].includes(n), "expected one of 8, 16, 32, 64, 128")
      .default(16),
    "kv-cache-size": int(1).optional(),
    "cpu-offload-gb": z.coerce.number().min(0).default(0),
    "scheduling-policy": z.enum(["fcfs", "priority"]).default("fcfs"),
    mode: z.enum(["echo", "random"]).default("random"),
    seed: int(0).optional(),
    "latency-calculator": z.enum(["constant", "per-token", ""]).optional(),
    "time-to-first-token": duration.optional(),
    "time-to-first-token-std-dev": duration.optional(),
    "inter-token-latency": duration.optional(),
    "inter-token-latency-std-dev": duration.optional(),
    "prefill-overhead": duration.optional(),
    "prefill-time-per-token": duration.optional(),
    "prefill-time-std-dev": duration.optional(),
    "time-factor-under-load": z.coerce.number().min(1).optional(),
    profile: z.string().optional(),
    tokenizer: z.enum(TOKENIZER_NAMES).optional(),
    speed: z.coerce.number().positive().default(1),
    "failure-injection-rate": z.coerce.number().min(0).max(100).default(0),
    "failure-types": z.array(z.enum(FAILURE_TYPES)).default([...FAILURE_TYPES]),
    "max-body-bytes": int(1).default(16 * 1024 * 1024),
    "stream-interval": int(1).default(1),
    "kv-events-config": kvEventsConfigSchema.optional(),
    "kv-events-encoding": z.enum(["array", "map"]).optional(),
    // llm-d-inference-sim's switch to map-encoded events; --kv-events-encoding wins when both are given.
    "use-vllm-map-event-format": z
      .union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")])
      .default(false),
    "drain-timeout": durationOrSeconds.default(30_000),
    // P/D KV transfer (docs/simulator.md#kv-transfer-pd).
    "kv-transfer-config": kvTransferConfigSchema.optional(),
    "kv-side-channel-host": z.string().min(1).optional(),
    "kv-side-channel-port": int(0, 65535).default(0),
    "kv-abort-timeout": durationOrSeconds.default(480_000),
    "kv-transfer-link": z.enum(KV_LINK_NAMES).default("infiniband"),
    "kv-transfer-bandwidth": z.coerce.number().positive().optional(),
    "kv-transfer-link-latency": duration.optional(),
    "kv-transfer-failure-rate": z.coerce.number().min(0).max(100).default(0),
    // A DCGM exporter beside the server (docs/simulator.md#dcgm-exporter---dcgm-port); off when absent.
    "dcgm-port": int(0, 65535).optional(),
    // The edge, as the router's: nginx's 60 s timeouts, 1 GiB of bodies held at once.
    "header-timeout": positiveDuration.default(DEFAULT_HEADER_TIMEOUT_MS),
    "body-timeout": positiveDuration.default(DEFAULT_BODY_TIMEOUT_MS),
    "max-inflight-body-bytes": int(1).default(DEFAULT_MAX_INFLIGHT_BODY_BYTES),
    ...Object.fromEntries(IGNORED_KEYS.map((k) => [k, z.unknown().optional()])),
  })
  .strict();

/** Validated simulator configuration (kebab-case keys, durations in ms). */
export type SimConfig = z.output<typeof simConfigSchema>;

/** Validation outcome; `error` names each offending path. */
export type SimConfigResult = { ok: true; config: SimConfig } | { ok: false; error: string };

/** Validates merged key-value pairs (file values first, flags last so they win). */
export function parseSimConfig(...layers: Record<string, unknown>[]): SimConfigResult {
  const merged = Object.assign({}, ...layers);
  const result = simConfigSchema.safeParse(merged);
  if (result.success) return { ok: true, config: result.data };
  const lines = result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
  return { ok: false, error: lines.join("\n") };
}

/** Reads a YAML config file into raw key-value pairs. */
export function readSimConfigFile(path: string): Record<string, unknown> {
  const value: unknown = parseYaml(readFileSync(path, "utf8"));
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new Error(`${path}: expected a YAML mapping`);
  return value as Record<string, unknown>;
}

/** The names clients may use for the base model: `served-model-name`, else `model`. */
export function servedModelNames(config: SimConfig): string[] {
  const names = config["served-model-name"];
  return names && names.length > 0 ? names : [config.model];
}
