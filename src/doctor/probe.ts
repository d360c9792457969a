/**
 * What `llmd doctor` reads from each model server, from this host: `/health` (reachability and
 * latency), `/v1/models` (served models) and `/metrics` (the simulator's
 * `llmd_sim_kv_transfer_config_info{kv_connector,kv_role,engine_id}` and transfer counters).
 */
import { readLabel, scanSamples } from "../endpoints/prom-text.ts";
import { type DoctorEndpoint, errorText } from "./inventory.ts";

/** A server's KV transfer configuration as its metrics expose it. */
export interface TransferInfo {
  connector: string;
  role: string;
  engineId: string;
}

/** What one endpoint answered. */
export interface EndpointProbe {
  endpoint: DoctorEndpoint;
  /** `/health`: round trip in ms, or why it failed. */
  health: { ok: true; ms: number } | { ok: false; error: string };
  /** Served model ids; undefined when `/v1/models` could not be read. */
  models: string[] | undefined;
  /** Undefined when the metrics expose no transfer configuration (or could not be read). */
  transfer: TransferInfo | undefined;
  /** Whether `/metrics` answered at all. */
  metricsRead: boolean;
}

/** The simulator's info gauge of its `--kv-transfer-config`. */
export const TRANSFER_INFO_METRIC = "llmd_sim_kv_transfer_config_info";

async function get(url: string, timeoutMs: number): Promise<Response> {
  return fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
}

async function textOf(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const response = await get(url, timeoutMs);
    return response.ok ? await response.text() : undefined;
  } catch {
    return undefined;
  }
}

/** The first transfer-info sample of a metrics page. */
export function transferInfoOf(text: string): TransferInfo | undefined {
  let info: TransferInfo | undefined;
  scanSamples(text, [TRANSFER_INFO_METRIC], (_i, start, end) => {
    info ??= {
      connector: readLabel(text, start, end, "kv_connector") ?? "",
      role: readLabel(text, start, end, "kv_role") ?? "",
      engineId: readLabel(text, start, end, "engine_id") ?? "",
    };
  });
  return info;
}

/** Sum of every sample of counter `name` in a metrics page. */
export function counterSum(text: string, name: string): number {
  let sum = 0;
  scanSamples(text, [name], (_i, _s, _e, value) => {
    sum += value;
  });
  return sum;
}

/** Reads an endpoint's metrics page (undefined when it cannot). */
export function metricsOf(endpoint: DoctorEndpoint, timeoutMs: number): Promise<string | undefined> {
  return textOf(`${endpoint.baseUrl}/metrics`, timeoutMs);
}

async function healthOf(endpoint: DoctorEndpoint, timeoutMs: number): Promise<EndpointProbe["health"]> {
  const start = performance.now();
  try {
    const response = await get(`${endpoint.baseUrl}/health`, timeoutMs);
    await response.arrayBuffer();
    if (!response.ok) return { ok: false, error: `/health answered ${response.status}` };
    return { ok: true, ms: performance.now() - start };
  } catch (err) {
    return { ok: false, error: errorText(err) };
  }
}

async function modelsOf(endpoint: DoctorEndpoint, timeoutMs: number): Promise<string[] | undefined> {
  const text = await textOf(`${endpoint.baseUrl}/v1/models`, timeoutMs);
  if (text === undefined) return undefined;
  try {
    const data = (JSON.parse(text) as { data?: { id?: unknown }[] }).data ?? [];
    return data.map((m) => m.id).filter((id): id is string => typeof id === "string");
  } catch {
    return undefined;
  }
}

/** Probes one endpoint; an unreachable one is not asked for models or metrics. */
export async function probeEndpoint(endpoint: DoctorEndpoint, timeoutMs: number): Promise<EndpointProbe> {
  const health = await healthOf(endpoint, timeoutMs);
  if (!health.ok) return { endpoint, health, models: undefined, transfer: undefined, metricsRead: false };
  const [models, metrics] = await Promise.all([
    modelsOf(endpoint, timeoutMs),
    metricsOf(endpoint, timeoutMs),
  ]);
  return {
    endpoint,
    health,
    models,
    transfer: metrics === undefined ? undefined : transferInfoOf(metrics),
    metricsRead: metrics !== undefined,
  };
}
