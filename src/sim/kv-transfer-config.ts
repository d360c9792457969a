/**
 * `--kv-transfer-config`: vLLM's KVTransferConfig JSON for P/D. The simulator models NixlConnector:
 * `kv_role` says which legs a server takes (`kv_producer` prefill legs, `kv_consumer` decode legs,
 * `kv_both` either), `engine_id` names it in `kv_transfer_params` (vLLM generates a UUID when it is
 * absent, and so does the simulator, per start), `kv_load_failure_policy` says what a decode does
 * when its pull fails (`recompute` the prefill locally, vLLM's default, or `fail` the request). Other
 * KVTransferConfig keys are accepted and ignored. Also the environment variables vLLM reads for
 * NIXL, as config layers.
 */
import { z } from "zod";
import { jsonOrMapping } from "./json-flag.ts";

/** What a server of each role accepts. */
export const KV_ROLES = ["kv_both", "kv_producer", "kv_consumer"] as const;

/** One of {@link KV_ROLES}. */
export type KvRole = (typeof KV_ROLES)[number];

const kvTransferObject = z
  .object({
    kv_connector: z.string().min(1),
    kv_role: z.enum(KV_ROLES),
    engine_id: z.string().min(1).optional(),
    kv_load_failure_policy: z.enum(["recompute", "fail"]).default("recompute"),
  })
  .loose();

/** Validated transfer configuration. */
export interface KvTransferConfig {
  connector: string;
  role: KvRole;
  /** The configured engine id; absent means a fresh UUID per start. */
  engineId: string | undefined;
  failurePolicy: "recompute" | "fail";
}

/** The `kv-transfer-config` schema of src/sim/config.ts: JSON text or a mapping. */
export const kvTransferConfigSchema = jsonOrMapping(kvTransferObject).transform(
  (v): KvTransferConfig => ({
    connector: v.kv_connector,
    role: v.kv_role,
    engineId: v.engine_id,
    failurePolicy: v.kv_load_failure_policy,
  }),
);

/** True when a server of `role` serves the prefill leg (`do_remote_decode`). */
export function servesPrefillLeg(role: KvRole): boolean {
  return role !== "kv_consumer";
}

/** True when a server of `role` serves the decode leg (`do_remote_prefill`). */
export function servesDecodeLeg(role: KvRole): boolean {
  return role !== "kv_producer";
}

/** vLLM's NIXL environment variables → simulator config keys. */
const ENV_KEYS: Record<string, string> = {
  VLLM_NIXL_SIDE_CHANNEL_HOST: "kv-side-channel-host",
  VLLM_NIXL_SIDE_CHANNEL_PORT: "kv-side-channel-port",
  VLLM_NIXL_ABORT_REQUEST_TIMEOUT: "kv-abort-timeout",
};

/** The config layer the environment sets (flags override it, it overrides the YAML file). */
export function kvTransferEnvLayer(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const layer: Record<string, string> = {};
  for (const [name, key] of Object.entries(ENV_KEYS)) {
    const value = env[name];
    if (value !== undefined && value !== "") layer[key] = value;
  }
  return layer;
}
