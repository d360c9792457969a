/**
 * Static endpoint lists: `--endpoints http://127.0.0.1:8001,http://127.0.0.1:8002` or the
 * `LLMD_ENDPOINTS` environment variable.
 */
import { badRequest } from "../../api/errors.ts";
import type { EndpointMetadata } from "../endpoint.ts";
import type { EndpointSource, EndpointSetListener } from "./source.ts";

/** Environment variable read by {@link endpointsFromEnv}. */
export const ENDPOINTS_ENV = "LLMD_ENDPOINTS";

/** Namespace given to endpoints that come from a URL list. */
export const STATIC_NAMESPACE = "default";

/**
 * Parses a comma- or whitespace-separated list of `http://host:port` URLs (scheme optional,
 * default port 80). Each URL becomes one endpoint keyed `default/<host>:<port>`.
 * Throws a 400 `LlmdError` naming the bad entry; duplicates are rejected.
 */
export function parseEndpointList(list: string): EndpointMetadata[] {
  const seen = new Set<string>();
  const endpoints: EndpointMetadata[] = [];
  for (const raw of list.split(/[\s,]+/)) {
    if (raw === "") continue;
    const endpoint = parseEndpointUrl(raw);
    if (seen.has(endpoint.key)) throw badRequest(`duplicate endpoint ${raw}`, "endpoints");
    seen.add(endpoint.key);
    endpoints.push(endpoint);
  }
  return endpoints;
}

function parseEndpointUrl(raw: string): EndpointMetadata {
  let url: URL;
  try {
    url = new URL(raw.includes("://") ? raw : `http://${raw}`);
  } catch {
    throw badRequest(`invalid endpoint URL ${JSON.stringify(raw)}`, "endpoints");
  }
  if (url.protocol !== "http:") {
    throw badRequest(`endpoint ${raw}: only http:// is supported`, "endpoints");
  }
  if (url.pathname !== "/" || url.search !== "") {
    throw badRequest(`endpoint ${raw}: give scheme, host and port only`, "endpoints");
  }
  const port = url.port === "" ? 80 : Number(url.port);
  const address = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const name = `${url.hostname}:${port}`;
  return { key: `${STATIC_NAMESPACE}/${name}`, name, namespace: STATIC_NAMESPACE, address, port, labels: {} };
}

/** Endpoints from `LLMD_ENDPOINTS`, or undefined when it is unset or empty. */
export function endpointsFromEnv(env: NodeJS.ProcessEnv = process.env): EndpointMetadata[] | undefined {
  const list = env[ENDPOINTS_ENV]?.trim();
  return list ? parseEndpointList(list) : undefined;
}

/** A source that delivers one fixed set and never changes. */
export function staticSource(endpoints: readonly EndpointMetadata[]): EndpointSource {
  const frozen = Object.freeze([...endpoints]);
  return {
    kind: "static",
    async start(onUpdate: EndpointSetListener) {
      onUpdate(frozen);
    },
    async stop() {},
  };
}
