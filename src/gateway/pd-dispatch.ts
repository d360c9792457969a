/**
 * How the router treats a P/D request, one whose placement names a prefill endpoint in the
 * `x-prefiller-host-port` plugin header. With `legs: "sidecar"` (llm-d's deployment) the header
 * goes with the request to the decode endpoint, whose sidecar runs both legs; with `legs:
 * "router"` the router runs them itself (two-leg-forward.ts) and the header goes nowhere.
 * Either way the client's answer names the prefill endpoint in `x-llmd-prefill-endpoint`.
 */
import { PREFILLER_HEADER } from "../disagg/headers.ts";
import { DEFAULT_PREFILL_RETRY, type PrefillRetry } from "../disagg/prefill-leg.ts";
import type { Endpoint } from "../endpoints/endpoint.ts";
import { PREFILL_SERVED_BY_HEADER } from "./headers.ts";
import type { GatewayPool } from "./types.ts";
import { endpointOrigin } from "./upstreams.ts";

/** Who runs a P/D request's two legs, and how the prefill leg retries. */
export interface PdOptions {
  legs: "sidecar" | "router";
  retry: PrefillRetry;
}

/** llm-d's way: the decode endpoint's sidecar runs the legs. */
export const DEFAULT_PD_OPTIONS: PdOptions = { legs: "sidecar", retry: DEFAULT_PREFILL_RETRY };

/** The prefill endpoint (`host:port`) plugin headers name, if any. */
export function prefillerOf(pluginHeaders: ReadonlyMap<string, string> | undefined): string | undefined {
  return pluginHeaders?.get(PREFILLER_HEADER);
}

/** The plugin headers without the prefill endpoint (the router runs the legs: nobody reads it). */
export function withoutPrefiller(pluginHeaders: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
  const out = new Map(pluginHeaders);
  out.delete(PREFILLER_HEADER);
  return out;
}

/** The pool endpoint at `host:port`. */
export function endpointAt(pool: GatewayPool, hostPort: string): Endpoint | undefined {
  const origin = `http://${hostPort}`;
  return pool.candidates().find((e) => endpointOrigin(e.metadata) === origin);
}

/** The client response's plugin headers plus the prefill endpoint (its key, or `host:port`). */
export function withPrefillServedBy(
  responseHeaders: ReadonlyMap<string, string> | undefined,
  prefill: string,
): ReadonlyMap<string, string> {
  return new Map([...(responseHeaders ?? []), [PREFILL_SERVED_BY_HEADER, prefill]]);
}
