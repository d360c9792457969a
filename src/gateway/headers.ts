/**
 * Header hygiene for the proxy hop: hop-by-hop headers never cross it (RFC 9110 §7.6.1), and
 * lengths are recomputed because the gateway may rewrite or buffer bodies.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";
import { SCHEDULER_HEADERS } from "../disagg/headers.ts";

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "content-length",
  // The router answers `Expect: 100-continue` itself (node does) and has the whole body before it
  // forwards; undici refuses a request carrying it, which was a 502 for the client's header.
  "expect",
]);

/** Response header naming the endpoint (`namespace/name`) that served the request. */
export const SERVED_BY_HEADER = "x-llmd-endpoint";

/** Response header naming the endpoint that ran a P/D request's prefill leg. */
export const PREFILL_SERVED_BY_HEADER = "x-llmd-prefill-endpoint";

/**
 * Headers for the upstream request: the client's minus hop-by-hop and minus the P/D headers only
 * the scheduler sets (a client must not pick its prefill endpoint), plus id and body length.
 */
export function upstreamRequestHeaders(
  client: Readonly<Record<string, string>>,
  requestId: string,
  bodyBytes: number,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in client) {
    if (!HOP_BY_HOP.has(name) && !SCHEDULER_HEADERS.has(name)) out[name] = client[name] as string;
  }
  out["x-request-id"] = requestId;
  out["content-length"] = String(bodyBytes);
  return out;
}

/**
 * Headers for the client response: the upstream's minus hop-by-hop, plus llm-d's markers and
 * the headers plugins asked for (`extra`, e.g. a session-affinity token).
 */
export function clientResponseHeaders(
  upstream: IncomingHttpHeaders,
  endpointKey: string,
  requestId: string,
  extra?: ReadonlyMap<string, string>,
): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    if (!HOP_BY_HOP.has(name)) out[name] = upstream[name];
  }
  if (extra) addPluginHeaders(out, extra);
  out[SERVED_BY_HEADER] = endpointKey;
  out["x-went-into-resp-headers"] = "true";
  out["x-request-id"] = requestId;
  return out;
}

/** `base` plus the headers plugins set for the upstream request; `base` itself when there are none. */
export function withPluginHeaders(
  base: Readonly<Record<string, string>>,
  extra: ReadonlyMap<string, string> | undefined,
): Readonly<Record<string, string>> {
  if (!extra || extra.size === 0) return base;
  const out = { ...base };
  addPluginHeaders(out, extra);
  return out;
}

/** Plugin-set headers never override hop-by-hop or length headers the proxy owns. */
function addPluginHeaders(out: Record<string, unknown>, extra: ReadonlyMap<string, string>): void {
  for (const [name, value] of extra) {
    const lower = name.toLowerCase();
    if (!HOP_BY_HOP.has(lower)) out[lower] = value;
  }
}
