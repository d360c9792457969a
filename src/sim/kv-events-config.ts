/**
 * `--kv-events-config`: vLLM's KVEventsConfig JSON (snake_case keys, vLLM's defaults), validated strictly
 * so a misspelt key fails at startup instead of silently publishing nothing. Accepts the JSON text (the
 * command line) or an already-parsed mapping (the `--config` YAML file).
 */
import { z } from "zod";
import { jsonOrMapping } from "./json-flag.ts";

/** The keys vLLM's KVEventsConfig has; anything else is refused. */
export const KV_EVENTS_CONFIG_KEYS = [
  "enable_kv_cache_events",
  "publisher",
  "endpoint",
  "replay_endpoint",
  "topic",
  "buffer_steps",
  "hwm",
  "max_queue_size",
] as const;

const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const kvEventsObject = z
  .object({
    enable_kv_cache_events: z.boolean().default(false),
    // vLLM's "null" publisher drops events; absent means zmq once events are enabled.
    publisher: z.enum(["zmq", "null"]).optional(),
    endpoint: z.string().min(1).default("tcp://*:5557"),
    replay_endpoint: z.string().min(1).nullable().default(null),
    topic: z.string().default(""),
    buffer_steps: count.default(10_000),
    hwm: count.default(100_000),
    max_queue_size: count.min(1).default(100_000),
  })
  // Loose, then refused below, so the message can list the keys vLLM accepts.
  .loose()
  .superRefine((v, ctx) => {
    const unknown = Object.keys(v).filter((k) => !(KV_EVENTS_CONFIG_KEYS as readonly string[]).includes(k));
    if (unknown.length > 0)
      ctx.addIssue({
        code: "custom",
        message: `unknown key${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")} (vLLM's KVEventsConfig keys: ${KV_EVENTS_CONFIG_KEYS.join(", ")})`,
      });
  });

/** Validated KV-events configuration. */
export interface KvEventsConfig {
  /** True when events are enabled and the publisher is zmq. */
  enabled: boolean;
  /** PUB endpoint: bound when it has a `*` or a wildcard host or is ipc:/inproc:, else connected. */
  endpoint: string;
  /** ROUTER endpoint to bind for replay; null = no replay socket. */
  replayEndpoint: string | null;
  /** The configured topic; "" means the default `kv@<host>:<port>@<model>`. */
  topic: string;
  /** Batches kept for replay (0 keeps none). */
  bufferSteps: number;
  /** ZeroMQ send high-water mark of the PUB socket (0 = unlimited). */
  hwm: number;
  /** Batches waiting for the send pump before new ones skip the live stream (≥ 1). */
  maxQueueSize: number;
}

/** The `kv-events-config` schema of src/sim/config.ts: JSON text or a mapping → `KvEventsConfig`. */
export const kvEventsConfigSchema = jsonOrMapping(kvEventsObject).transform(
  (v): KvEventsConfig => ({
    enabled: v.enable_kv_cache_events && (v.publisher ?? "zmq") === "zmq",
    endpoint: v.endpoint,
    replayEndpoint: v.replay_endpoint,
    topic: v.topic,
    bufferSteps: v.buffer_steps,
    hwm: v.hwm,
    maxQueueSize: v.max_queue_size,
  }),
);

/**
 * Resolves vLLM-style `${NAME}` placeholders in a topic: `${PORT}` is the HTTP port, `${MODEL}` the
 * served model name, `${POD_IP}` the `POD_IP` environment variable or else `host`; any other name is
 * read from the environment and left literal when unset.
 */
export function resolveTopic(
  topic: string,
  vars: { host: string; port: number; model: string },
  env: NodeJS.ProcessEnv = process.env,
): string {
  const podIp = env.POD_IP || vars.host;
  if (topic === "") return `kv@${podIp}:${vars.port}@${vars.model}`;
  return topic.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => {
    if (name === "PORT") return String(vars.port);
    if (name === "MODEL") return vars.model;
    if (name === "POD_IP") return podIp;
    return env[name] ?? whole;
  });
}
