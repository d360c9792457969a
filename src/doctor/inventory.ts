/**
 * The endpoints `llmd doctor` examines: from a router's `GET /debug/endpoints`, or from an
 * endpoints file in llm-d's file-discovery format (what `llmd router --endpoints-file` reads).
 */
import { readFileSync } from "node:fs";
import type { EndpointMetadata } from "../endpoints/endpoint.ts";
import { endpointBaseUrl } from "../endpoints/pooled-endpoint.ts";
import { parseEndpointsFile } from "../endpoints/sources/endpoints-file.ts";

/** One model server under examination. */
export interface DoctorEndpoint {
  /** `namespace/name` (a data-parallel rank adds `-rank-N`). */
  key: string;
  /** `address:port`, as P/D headers name it. */
  hostPort: string;
  baseUrl: string;
  labels: Readonly<Record<string, string>>;
  /** The router's health verdict, when read from a router. */
  routerHealth?: string;
}

/** An endpoint as a file or the router lists it (`/debug/endpoints` adds its health). */
type ListedEndpoint = EndpointMetadata & { health?: string };

function toDoctorEndpoint(e: ListedEndpoint): DoctorEndpoint {
  const baseUrl = endpointBaseUrl(e, "http");
  return {
    key: e.key,
    hostPort: baseUrl.slice("http://".length),
    baseUrl,
    labels: e.labels,
    ...(e.health === undefined ? {} : { routerHealth: e.health }),
  };
}

/** The endpoints of an endpoints file; throws an `LlmdError` naming the problem. */
export function endpointsFromFile(path: string): DoctorEndpoint[] {
  return parseEndpointsFile(readFileSync(path, "utf8")).map(toDoctorEndpoint);
}

/** The endpoints a running router lists on `GET /debug/endpoints`. */
export async function endpointsFromRouter(routerUrl: string, timeoutMs: number): Promise<DoctorEndpoint[]> {
  const url = new URL("/debug/endpoints", routerUrl);
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new Error(`cannot reach the router at ${url}: ${errorText(err)}`);
  }
  if (!response.ok) throw new Error(`${url} answered ${response.status}: is it an llmd router?`);
  const body = (await response.json()) as { endpoints?: ListedEndpoint[] };
  if (!Array.isArray(body.endpoints)) throw new Error(`${url} did not list endpoints`);
  return body.endpoints.map(toDoctorEndpoint);
}

/** A short reason for a failed fetch or socket: the system error code when there is one. */
export function errorText(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return cause.code;
  if (err instanceof Error && err.name === "TimeoutError") return "timed out";
  return cause?.message ?? (err instanceof Error ? err.message : String(err));
}
