/**
 * `topology-extractor` (llm-d, alpha): publishes each endpoint's placement (`Topology`) for the
 * topology affinity plugins. The hostname is the `hostnameLabel` pod label when configured
 * (no label → no hostname, so the endpoint never matches at host tier), else the pod name, as in
 * llm-d; zone and region come from Kubernetes' well-known `topology.kubernetes.io/{zone,region}`
 * labels when present. Published per request in `ctx.state` (a map by endpoint key), since llmd's
 * endpoint snapshots are shared and producers do not write endpoint attributes in place.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { attributeKey, TOPOLOGY, type Topology } from "../../framework/data-keys.ts";
import type { DataProducer, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";

/** Kubernetes' well-known placement labels. */
export const ZONE_LABEL = "topology.kubernetes.io/zone";
export const REGION_LABEL = "topology.kubernetes.io/region";

const parameters = z.strictObject({ hostnameLabel: z.string().min(1).optional() }).prefault({});

/** Validated parameters of `topology-extractor`. */
export type TopologyExtractorParams = z.output<typeof parameters>;

class TopologyExtractor implements DataProducer {
  readonly type = "topology-extractor";
  private readonly stateKey: string;

  constructor(
    readonly name: string,
    private readonly params: TopologyExtractorParams,
  ) {
    this.stateKey = attributeKey(TOPOLOGY, name);
  }

  produce(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void {
    const byEndpoint = new Map<string, Topology>();
    for (const e of endpoints) byEndpoint.set(e.metadata.key, this.topologyOf(e));
    ctx.state.set(this.stateKey, byEndpoint);
  }

  private topologyOf(endpoint: Endpoint): Topology {
    const { labels, name } = endpoint.metadata;
    const label = this.params.hostnameLabel;
    const topology: Topology = {};
    const hostname = label === undefined ? name : labels[label];
    if (hostname) topology.hostname = hostname;
    if (labels[ZONE_LABEL]) topology.zone = labels[ZONE_LABEL];
    if (labels[REGION_LABEL]) topology.region = labels[REGION_LABEL];
    return topology;
  }
}

/** Registry entry for `topology-extractor`. */
export const definition: PluginDefinition<TopologyExtractorParams> = {
  type: "topology-extractor",
  stability: "alpha",
  description: "Publishes each endpoint's Topology (hostname from hostnameLabel or pod name; zone, region)",
  parameters,
  produces: [TOPOLOGY],
  create: (params, env) => new TopologyExtractor(env.name, params),
};
