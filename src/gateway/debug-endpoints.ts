/**
 * `GET /debug/endpoints`: the router's view of its model servers, read-only, for diagnostics
 * (`llmd doctor --router`): address, labels, health and served models of every endpoint.
 */
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { PooledEndpoint } from "../endpoints/pool.ts";
import type { GatewayPool } from "./types.ts";

/** One endpoint as `/debug/endpoints` lists it. */
export interface DebugEndpoint {
  key: string;
  name: string;
  namespace: string;
  address: string;
  port: number;
  dpRank?: number;
  labels: Readonly<Record<string, string>>;
  /** `pending`, `ready`, `unhealthy` or `draining` (a pool that only lists candidates: `ready`). */
  health: string;
  servedModels?: readonly string[];
  lastError?: string;
}

function describe(endpoint: Endpoint | PooledEndpoint): DebugEndpoint {
  const { key, name, namespace, address, port, dpRank, labels } = endpoint.metadata;
  const status = "status" in endpoint ? endpoint.status : undefined;
  return {
    key,
    name,
    namespace,
    address,
    port,
    ...(dpRank === undefined ? {} : { dpRank }),
    labels,
    health: status?.health ?? "ready",
    ...(status?.servedModels ? { servedModels: status.servedModels } : {}),
    ...(status?.lastError ? { lastError: status.lastError } : {}),
  };
}

/** The body of `GET /debug/endpoints`. */
export function debugEndpoints(pool: GatewayPool): { endpoints: DebugEndpoint[] } {
  return { endpoints: (pool.all?.() ?? pool.candidates()).map(describe) };
}
