/**
 * `topology-affinity-filter` (llm-d, alpha): keeps the candidates co-located with the P/D peer
 * (`peer-endpoint`) at `minAffinity` or tighter, so the KV transfer between prefill and decode
 * stays on NVLink (same host) or a near network. It fails open, since affinity is a preference and
 * must never make a request unroutable: no peer or no peer topology → all candidates; no candidate
 * close enough → all candidates. A candidate without topology is dropped otherwise.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { Filter, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import {
  DEFAULT_TOPOLOGY_PRODUCER,
  peerTopology,
  readTopologies,
  sharedTier,
  TIERS,
} from "../shared/topology.ts";

const parameters = z
  .strictObject({
    minAffinity: z.enum(TIERS).default("host"),
    topologyProducerName: z.string().min(1).default(DEFAULT_TOPOLOGY_PRODUCER),
  })
  .prefault({});

/** Validated parameters of `topology-affinity-filter`. */
export type TopologyAffinityFilterParams = z.output<typeof parameters>;

class TopologyAffinityFilter implements Filter {
  readonly type = "topology-affinity-filter";
  private readonly loosest: number;

  constructor(
    readonly name: string,
    private readonly params: TopologyAffinityFilterParams,
  ) {
    this.loosest = TIERS.indexOf(params.minAffinity);
  }

  filter(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    const topologies = readTopologies(ctx, this.params.topologyProducerName);
    const peer = peerTopology(ctx, topologies);
    if (!peer) return endpoints;
    const kept = endpoints.filter((e) => {
      const tier = sharedTier(topologies?.get(e.metadata.key), peer);
      return tier !== undefined && TIERS.indexOf(tier) <= this.loosest;
    });
    return kept.length > 0 ? kept : endpoints;
  }
}

/** Registry entry for `topology-affinity-filter`. */
export const definition: PluginDefinition<TopologyAffinityFilterParams> = {
  type: "topology-affinity-filter",
  stability: "alpha",
  description: "Keeps candidates co-located with the P/D peer at minAffinity (host) or tighter; fails open",
  parameters,
  create: (params, env) => new TopologyAffinityFilter(env.name, params),
};
