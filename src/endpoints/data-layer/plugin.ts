/**
 * How llm-d's data-layer plugins (sources, extractors, discovery) fit llmd: each configured
 * instance holds its validated parameters and writes them into the endpoint pool's options. The
 * pool then does the work (scraping, extraction, `/v1/models` polling, file discovery).
 */
import type { z } from "zod";
import type { Plugin, PluginDefinition } from "../../plugin/types.ts";
import type { EndpointPoolOptions } from "../pool-options.ts";

/** llm-d data-layer roles: sources poll endpoints, extractors read what sources fetch, discovery finds endpoints. */
export type DataLayerKind = "data-source" | "extractor" | "discovery";

/**
 * A data-layer plugin (llm-d's `metrics-data-source`, `core-metrics-extractor`, `file-discovery`…):
 * configured like any plugin, but run by the host's endpoint pool, never by the scheduler.
 */
export interface DataLayerPlugin extends Plugin {
  readonly dataLayerKind: DataLayerKind;
}

/**
 * Pool options being assembled from a config. `scrapeIntervalMs` holds the interval a source asks
 * for, before the config layer rounds it to the base tick (`--refresh-metrics-interval`).
 */
export type PoolOptionsDraft = Partial<EndpointPoolOptions>;

/** A data-layer instance the endpoint pool can be configured from. */
export interface PoolDataLayerPlugin extends DataLayerPlugin {
  /** Writes this instance's parameters into `draft`. */
  configurePool(draft: PoolOptionsDraft): void;
  /** Sources only: true when `extractor` can read what this source fetches (wiring check). */
  accepts(extractor: Plugin): boolean;
  /** Sources that run their extractors themselves: `extractor` is wired to this source. */
  feed?(extractor: Plugin): void;
}

/** True for instances created from this module's definitions. */
export function isPoolDataLayerPlugin(plugin: Plugin): plugin is PoolDataLayerPlugin {
  return typeof (plugin as Partial<PoolDataLayerPlugin>).configurePool === "function";
}

/** What a data-layer definition declares besides llm-d's name, stability and parameters. */
export interface DataLayerSpec<P> {
  type: string;
  kind: DataLayerKind;
  description: string;
  parameters: z.ZodType<P>;
  /** Applies validated parameters to the pool options (omit when the pool needs nothing). */
  configure?: (params: P, draft: PoolOptionsDraft) => void;
  /** Extractor types a source feeds; `"any"` for notification sources. Default: none. */
  extractors?: readonly string[] | "any";
}

class DataLayerInstance<P> implements PoolDataLayerPlugin {
  readonly type: string;
  readonly dataLayerKind: DataLayerKind;

  constructor(
    readonly name: string,
    private readonly spec: DataLayerSpec<P>,
    private readonly params: P,
  ) {
    this.type = spec.type;
    this.dataLayerKind = spec.kind;
  }

  configurePool(draft: PoolOptionsDraft): void {
    this.spec.configure?.(this.params, draft);
  }

  accepts(extractor: Plugin): boolean {
    const allowed = this.spec.extractors ?? [];
    return allowed === "any" || allowed.includes(extractor.type);
  }
}

/** A beta plugin definition (all of llm-d's core data-layer plugins are beta) from a spec. */
export function dataLayerDefinition<P>(spec: DataLayerSpec<P>): PluginDefinition<P> {
  return {
    type: spec.type,
    stability: "beta",
    description: spec.description,
    parameters: spec.parameters,
    create: (params, env) => new DataLayerInstance(env.name, spec, params),
  };
}
