/**
 * `dcgm-data-source` and `dcgm-extractor` (llm-d, alpha): GPU utilisation from an NVIDIA DCGM
 * exporter next to each endpoint. The source polls `<scheme>://<endpoint address>:<port><path>`
 * (the exporter's Prometheus page, port 9400 by default) on its own interval; the extractor takes
 * `DCGM_FI_DEV_GPU_UTIL` (0–100 per GPU), keeps the samples of this endpoint's pod (a sample
 * without a `pod` label is kept, as a sidecar exporter's are), and publishes the busiest GPU's
 * value / 100 as the endpoint attribute `GPUUtilization` of this extractor.
 */
import { z } from "zod";
import { durationMsSchema } from "../../core/units.ts";
import type { Plugin, PluginDefinition } from "../../plugin/types.ts";
import type { AttributeExtract, AttributeSource } from "../attribute-poller.ts";
import { readLabel, scanSamples } from "../prom-text.ts";
import { port } from "./metrics-data-source.ts";
import type { DataLayerKind, PoolDataLayerPlugin, PoolOptionsDraft } from "./plugin.ts";

/** DCGM's per-GPU utilisation gauge, in percent. */
export const GPU_UTIL_METRIC = "DCGM_FI_DEV_GPU_UTIL";
/** The attribute `dcgm-extractor` publishes (a number in [0, 1]) under `<its name>/GPUUtilization`. */
export const GPU_UTILIZATION = "GPUUtilization";

const sourceParameters = z
  .strictObject({
    scheme: z.enum(["http", "https"]).default("http"),
    path: z.string().startsWith("/", { error: 'expected a URL path starting with "/"' }).default("/metrics"),
    port: port.default(9400),
    insecureSkipVerify: z.boolean().default(true),
    /** Poll period, rounded up to the pool's tick (llm-d's sample config sets it here). */
    interval: durationMsSchema.optional(),
    useNodeAddress: z
      .literal(false, { error: "llmd's endpoints carry no node address: run the exporter as a sidecar" })
      .optional(),
  })
  .prefault({});

/** Validated `dcgm-data-source` parameters. */
export type DcgmDataSourceParams = z.output<typeof sourceParameters>;

/** A data-layer extractor that reads an attribute source's pages. */
interface AttributeExtractorPlugin extends PoolDataLayerPlugin {
  readonly extract: AttributeExtract;
}

function isAttributeExtractor(plugin: Plugin): plugin is AttributeExtractorPlugin {
  return typeof (plugin as Partial<AttributeExtractorPlugin>).extract === "function";
}

class DcgmDataSource implements PoolDataLayerPlugin {
  readonly type = "dcgm-data-source";
  readonly dataLayerKind: DataLayerKind = "data-source";
  private readonly extractors: AttributeExtract[] = [];

  constructor(
    readonly name: string,
    private readonly params: DcgmDataSourceParams,
  ) {}

  accepts(extractor: Plugin): boolean {
    return extractor.type === "dcgm-extractor";
  }

  feed(extractor: Plugin): void {
    if (isAttributeExtractor(extractor)) this.extractors.push(extractor.extract);
  }

  configurePool(draft: PoolOptionsDraft): void {
    const { scheme, path, port, insecureSkipVerify, interval } = this.params;
    const source: AttributeSource = {
      name: this.name,
      scheme,
      path,
      port,
      insecureSkipVerify,
      ...(interval === undefined ? {} : { intervalMs: interval }),
      extractors: this.extractors,
    };
    draft.attributeSources = [...(draft.attributeSources ?? []), source];
  }
}

class DcgmExtractor implements AttributeExtractorPlugin {
  readonly type = "dcgm-extractor";
  readonly dataLayerKind: DataLayerKind = "extractor";
  private readonly key: string;

  constructor(readonly name: string) {
    this.key = `${name}/${GPU_UTILIZATION}`;
  }

  accepts(): boolean {
    return false;
  }

  configurePool(): void {}

  readonly extract: AttributeExtract = (text, endpoint, attributes) => {
    let busiest = -1;
    const malformed = scanSamples(text, [GPU_UTIL_METRIC], (_i, start, end, value) => {
      const pod = readLabel(text, start, end, "pod");
      if (pod !== undefined && pod !== endpoint.name) return;
      if (Number.isFinite(value)) busiest = Math.max(busiest, value);
    });
    if (busiest < 0) return malformed + 1;
    attributes.set(this.key, busiest / 100);
    return malformed;
  };
}

/** Registry entry for `dcgm-data-source`. */
export const dcgmDataSource: PluginDefinition<DcgmDataSourceParams> = {
  type: "dcgm-data-source",
  stability: "alpha",
  description: "Polls an NVIDIA DCGM exporter next to each endpoint (port 9400, path, scheme, interval)",
  parameters: sourceParameters,
  create: (params, env) => new DcgmDataSource(env.name, params),
};

/** Registry entry for `dcgm-extractor`. */
export const dcgmExtractor: PluginDefinition<Record<string, never>> = {
  type: "dcgm-extractor",
  stability: "alpha",
  description:
    "GPUUtilization attribute: the busiest GPU's DCGM_FI_DEV_GPU_UTIL of the endpoint's pod, / 100",
  parameters: z.strictObject({}),
  create: (_params, env) => new DcgmExtractor(env.name),
};
