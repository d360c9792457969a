/** The pool's record of one endpoint: the `Endpoint` plugins see plus health and polling state. */
import { type Endpoint, type EndpointMetadata, type EndpointMetrics, emptyMetrics } from "./endpoint.ts";
import type { MetricsExtractor } from "./metrics-extractor.ts";

/**
 * `pending`: never probed successfully; `ready`: a candidate; `unhealthy`: taken out by
 * consecutive probe failures or by the proxy (`markFailed`) until the next successful probe;
 * `draining`: it answered that it is shutting down (`markDraining`), out until a probe fails (the
 * server went away) and a later one succeeds (it came back).
 */
export type EndpointHealth = "pending" | "ready" | "unhealthy" | "draining";

/** Diagnostics of one endpoint (read-only for callers). */
export interface EndpointStatus {
  health: EndpointHealth;
  /** Probe failures since the last success. */
  consecutiveFailures: number;
  /** Last probe or models-poll error, cleared by a successful probe. */
  lastError: string | undefined;
  /** Served model ids from `/v1/models`, sorted; undefined until a poll succeeds. */
  servedModels: readonly string[] | undefined;
  /** Successful scrapes (or health probes). */
  scrapes: number;
  /** Failed scrapes (or health probes): llm-d's `datalayer_poll_errors_total` for this endpoint. */
  pollErrors: number;
  /** Pages whose required metrics were missing or lines malformed. */
  extractErrors: number;
}

/** An endpoint with its pool status. Object identity is stable while its metadata is unchanged. */
export interface PooledEndpoint extends Endpoint {
  readonly status: Readonly<EndpointStatus>;
}

/** Mutable pool-internal state behind a {@link PooledEndpoint}. */
export class EndpointRecord implements PooledEndpoint {
  readonly metrics: EndpointMetrics = emptyMetrics();
  readonly attributes = new Map<string, unknown>();
  readonly status: EndpointStatus = {
    health: "pending",
    consecutiveFailures: 0,
    lastError: undefined,
    servedModels: undefined,
    scrapes: 0,
    pollErrors: 0,
    extractErrors: 0,
  };
  /** The scrape under way, so scrapes never overlap and callers can await it. */
  scrapeInFlight: Promise<void> | undefined;
  modelsInFlight: Promise<void> | undefined;
  /** Clock time of the last `/v1/models` poll start; -Infinity before the first. */
  lastModelsPollMs = Number.NEGATIVE_INFINITY;
  /** Bumped by `markFailed`, so a scrape started before the failure cannot restore health. */
  failEpoch = 0;

  constructor(
    readonly metadata: EndpointMetadata,
    readonly extractor: MetricsExtractor,
    readonly baseUrl: string,
  ) {}
}

/** True when two metadata records describe the same endpoint (address, port, rank, labels). */
export function sameMetadata(a: EndpointMetadata, b: EndpointMetadata): boolean {
  if (a.address !== b.address || a.port !== b.port || a.dpRank !== b.dpRank) return false;
  if (a.name !== b.name || a.namespace !== b.namespace) return false;
  const aKeys = Object.keys(a.labels);
  if (aKeys.length !== Object.keys(b.labels).length) return false;
  return aKeys.every((k) => a.labels[k] === b.labels[k]);
}

/** `http://host:port` for an endpoint (IPv6 bracketed). */
export function endpointBaseUrl(metadata: EndpointMetadata, scheme: "http" | "https", port?: number): string {
  const host = metadata.address.includes(":") ? `[${metadata.address}]` : metadata.address;
  return `${scheme}://${host}:${port ?? metadata.port}`;
}
