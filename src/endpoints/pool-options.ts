/** Options of the endpoint pool, with llm-d's defaults. */
import { type Clock, wallClock } from "../core/clock.ts";
import { type OperationalLog, stderrLog } from "../core/log.ts";
import type { AttributeSource } from "./attribute-poller.ts";
import type { MetricsExtractorOptions } from "./engine-configs.ts";
import type { TlsFiles } from "./http-fetcher.ts";
import type { EndpointSource } from "./sources/source.ts";

/** Default scrape period in ms (llm-d's `--refresh-metrics-interval`). */
export const DEFAULT_SCRAPE_INTERVAL_MS = 50;

export interface EndpointPoolOptions {
  /** Static list or file discovery. */
  source: EndpointSource;
  /** Wall clock by default; stamps `updatedAtMs` and judges staleness. */
  clock?: Clock;
  /** Scrape period in ms (llm-d `--refresh-metrics-interval`, default 50); 0 = only on `refresh()`. */
  scrapeIntervalMs?: number;
  /** Metrics older than this are stale, in ms (llm-d `--metrics-staleness-threshold`, default 2000). */
  stalenessThresholdMs?: number;
  /** `/v1/models` polling period in ms (default 5000); 0 disables polling. */
  modelsIntervalMs?: number;
  /** Engine metric names (llm-d `core-metrics-extractor` parameters; vLLM default, SGLang, …). */
  metricsSpecs?: MetricsExtractorOptions;
  /** Scrape path (default `/metrics`); empty string probes `healthPath` instead and reads no metrics. */
  metricsPath?: string;
  /** Health probe path used when `metricsPath` is empty (default `/health`). */
  healthPath?: string;
  /** Scrape port when metrics live on another port than the API (llm-d `metrics-data-source.port`). */
  metricsPort?: number;
  /** `http` (default) or `https` for scrapes and model polls. */
  scheme?: "http" | "https";
  /** Skip TLS certificate verification for https (llm-d `insecureSkipVerify`, default true). */
  insecureSkipVerify?: boolean;
  /** PEM files for https: CA bundle and mTLS client pair (llm-d `caCertPath`, `clientCertPath`, `clientKeyPath`). */
  tlsFiles?: TlsFiles;
  /** Per-request timeout of scrapes and polls in ms (default 1000). */
  requestTimeoutMs?: number;
  /** Consecutive probe failures that take a ready endpoint out (default 3). */
  unhealthyAfterFailures?: number;
  /** Operational log; defaults to stderr. */
  log?: OperationalLog;
  /** Sources polled besides the engine's metrics, into endpoint attributes (e.g. `dcgm-data-source`). */
  attributeSources?: readonly AttributeSource[];
}

/** Options with defaults applied. */
export type ResolvedPoolOptions = Required<
  Omit<EndpointPoolOptions, "metricsPort" | "metricsSpecs" | "tlsFiles">
> &
  Pick<EndpointPoolOptions, "metricsPort" | "metricsSpecs" | "tlsFiles">;

/** Applies defaults; throws a `TypeError` for nonsensical numbers (a programming error). */
export function resolvePoolOptions(options: EndpointPoolOptions): ResolvedPoolOptions {
  const resolved: ResolvedPoolOptions = {
    source: options.source,
    clock: options.clock ?? wallClock,
    scrapeIntervalMs: options.scrapeIntervalMs ?? DEFAULT_SCRAPE_INTERVAL_MS,
    stalenessThresholdMs: options.stalenessThresholdMs ?? 2000,
    modelsIntervalMs: options.modelsIntervalMs ?? 5000,
    metricsSpecs: options.metricsSpecs,
    metricsPath: options.metricsPath ?? "/metrics",
    healthPath: options.healthPath ?? "/health",
    metricsPort: options.metricsPort,
    scheme: options.scheme ?? "http",
    insecureSkipVerify: options.insecureSkipVerify ?? true,
    tlsFiles: options.tlsFiles,
    requestTimeoutMs: options.requestTimeoutMs ?? 1000,
    unhealthyAfterFailures: options.unhealthyAfterFailures ?? 3,
    log: options.log ?? stderrLog("endpoints"),
    attributeSources: options.attributeSources ?? [],
  };
  for (const key of [
    "scrapeIntervalMs",
    "stalenessThresholdMs",
    "modelsIntervalMs",
    "requestTimeoutMs",
  ] as const) {
    if (!(resolved[key] >= 0)) throw new TypeError(`${key} must be a non-negative number`);
  }
  if (!(resolved.unhealthyAfterFailures >= 1)) throw new TypeError("unhealthyAfterFailures must be >= 1");
  return resolved;
}
