/**
 * llm-d's data-layer plugin definitions, as one list for the config layer's registry. The
 * parameterless ones are accepted because the endpoint pool already does their work:
 * `models-data-source`/`models-data-extractor` are its `/v1/models` polling, and
 * `endpoint-notification-source` is how it tells consumers about endpoints coming and going.
 */
import { noParameters } from "../../plugin/params.ts";
import type { AnyPluginDefinition } from "../../plugin/registry.ts";
import { coreMetricsExtractor } from "./core-metrics-extractor.ts";
import { dcgmDataSource, dcgmExtractor } from "./dcgm.ts";
import { fileDiscovery } from "./file-discovery.ts";
import { metricsDataSource } from "./metrics-data-source.ts";
import { dataLayerDefinition } from "./plugin.ts";

export { isPoolDataLayerPlugin, type PoolDataLayerPlugin, type PoolOptionsDraft } from "./plugin.ts";

/** Type of the source and extractor llm-d injects when `dataLayer.injectDefaults` is true. */
export const DEFAULT_METRICS_SOURCE = "metrics-data-source";
/** See {@link DEFAULT_METRICS_SOURCE}. */
export const DEFAULT_METRICS_EXTRACTOR = "core-metrics-extractor";

const modelsDataSource = dataLayerDefinition({
  type: "models-data-source",
  kind: "data-source",
  description: "Polls /v1/models (served models, LoRAs); the pool always does (every 5 s)",
  parameters: noParameters,
  extractors: ["models-data-extractor"],
});

const modelsDataExtractor = dataLayerDefinition({
  type: "models-data-extractor",
  kind: "extractor",
  description: "Reads served model ids from /v1/models; built into the pool",
  parameters: noParameters,
});

const endpointNotificationSource = dataLayerDefinition({
  type: "endpoint-notification-source",
  kind: "data-source",
  description: "Endpoint added/removed events for its extractors; built into the pool",
  parameters: noParameters,
  extractors: "any",
});

/** Every data-layer definition llmd registers. */
export const dataLayerPlugins: readonly AnyPluginDefinition[] = [
  metricsDataSource,
  coreMetricsExtractor,
  modelsDataSource,
  modelsDataExtractor,
  endpointNotificationSource,
  fileDiscovery,
  dcgmDataSource,
  dcgmExtractor,
];
