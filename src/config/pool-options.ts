/**
 * A loaded config's data layer as endpoint-pool options: discovery from `dataLayer.discovery`
 * (`file-discovery`), scraping from `metrics-data-source`, engine metric names from
 * `core-metrics-extractor`. Command-line flags override the config, as llm-d's flags do.
 */
import { LlmdError } from "../api/errors.ts";
import type { Clock } from "../core/clock.ts";
import type { OperationalLog } from "../core/log.ts";
import type { PoolOptionsDraft } from "../endpoints/data-layer/index.ts";
import type { EndpointMetadata } from "../endpoints/endpoint.ts";
import { DEFAULT_SCRAPE_INTERVAL_MS, type EndpointPoolOptions } from "../endpoints/pool-options.ts";
import { fileDiscoverySource } from "../endpoints/sources/file-discovery.ts";
import type { EndpointSource } from "../endpoints/sources/source.ts";
import { staticSource } from "../endpoints/sources/static-source.ts";
import type { RuntimeConfig } from "./load.ts";

/** Command-line values that win over the config (all optional). */
export interface PoolOverrides {
  /** `--endpoints` / `LLMD_ENDPOINTS`: a static list replaces the config's discovery. */
  endpoints?: readonly EndpointMetadata[];
  /** `--endpoints-file`: a watched llm-d endpoints file replaces the config's discovery. */
  endpointsFile?: string;
  /** `--refresh-metrics-interval` in ms: the base tick (default 50; 0 = scrape only on `refresh()`). */
  scrapeIntervalMs?: number;
  /** `--metrics-staleness-threshold` in ms (default 2000). */
  stalenessThresholdMs?: number;
  clock?: Clock;
  log?: OperationalLog;
}

/**
 * Pool options from `runtime`'s data layer with `overrides` applied. Throws an `LlmdError`
 * (`no_endpoints_configured`) when neither the flags nor the config name any endpoints.
 */
export function endpointPoolOptionsFromConfig(
  runtime: Pick<RuntimeConfig, "dataLayerPlugins">,
  overrides: PoolOverrides = {},
): EndpointPoolOptions {
  const { discovery, pipeline, metrics } = runtime.dataLayerPlugins;
  const draft: PoolOptionsDraft = overrides.log ? { log: overrides.log } : {};
  for (const plugin of pipeline) plugin.configurePool(draft);
  if (!metrics) draft.metricsPath = "";
  const fromFlags = flagSource(overrides, draft.log);
  if (!fromFlags) discovery?.configurePool(draft);
  const source = fromFlags ?? draft.source;
  if (!source) throw noEndpoints();
  const base = overrides.scrapeIntervalMs ?? DEFAULT_SCRAPE_INTERVAL_MS;
  return {
    ...draft,
    source,
    scrapeIntervalMs: roundToTick(draft.scrapeIntervalMs, base),
    ...(overrides.stalenessThresholdMs === undefined
      ? {}
      : { stalenessThresholdMs: overrides.stalenessThresholdMs }),
    ...(overrides.clock ? { clock: overrides.clock } : {}),
  };
}

function flagSource(overrides: PoolOverrides, log: OperationalLog | undefined): EndpointSource | undefined {
  if (overrides.endpointsFile)
    return fileDiscoverySource({ path: overrides.endpointsFile, ...(log ? { log } : {}) });
  if (overrides.endpoints && overrides.endpoints.length > 0) return staticSource(overrides.endpoints);
  return undefined;
}

/** llm-d rounds a source's interval to the nearest multiple of the base tick (at least one tick). */
export function roundToTick(requestedMs: number | undefined, baseMs: number): number {
  if (requestedMs === undefined || baseMs <= 0) return baseMs;
  return Math.max(baseMs, Math.round(requestedMs / baseMs) * baseMs);
}

function noEndpoints(): LlmdError {
  return new LlmdError(
    "no_endpoints_configured",
    "no endpoints: give --endpoints, --endpoints-file or LLMD_ENDPOINTS, or wire a file-discovery plugin as dataLayer.discovery.endpoints",
    {},
  );
}
