/**
 * `topology-affinity-scorer` (llm-d, alpha): grades candidates by how close they run to the P/D
 * peer (`peer-endpoint`): same host 1.0, rack 0.2, zone 0.05, region 0.02, otherwise 0 (also
 * without a peer or topology, so it adds nothing to the weighted sum rather than skewing it).
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { SchedulingContext, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import {
  DEFAULT_TOPOLOGY_PRODUCER,
  peerTopology,
  readTopologies,
  sharedTier,
  type Tier,
} from "../shared/topology.ts";

/** Score per shared tier (llm-d's values). */
export const TIER_SCORES: Readonly<Record<Tier, number>> = { host: 1, rack: 0.2, zone: 0.05, region: 0.02 };

const parameters = z
  .strictObject({ topologyProducerName: z.string().min(1).default(DEFAULT_TOPOLOGY_PRODUCER) })
  .prefault({});

/** Validated parameters of `topology-affinity-scorer`. */
export type TopologyAffinityScorerParams = z.output<typeof parameters>;

class TopologyAffinityScorer implements Scorer {
  readonly type = "topology-affinity-scorer";
  readonly category = "affinity";

  constructor(
    readonly name: string,
    private readonly params: TopologyAffinityScorerParams,
  ) {}

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const scores = new Float64Array(endpoints.length);
    const topologies = readTopologies(ctx, this.params.topologyProducerName);
    const peer = peerTopology(ctx, topologies);
    if (!peer) return scores;
    endpoints.forEach((e, i) => {
      const tier = sharedTier(topologies?.get(e.metadata.key), peer);
      if (tier) scores[i] = TIER_SCORES[tier];
    });
    return scores;
  }
}

/** Registry entry for `topology-affinity-scorer`. */
export const definition: PluginDefinition<TopologyAffinityScorerParams> = {
  type: "topology-affinity-scorer",
  stability: "alpha",
  description: "Scores candidates by proximity to the P/D peer: host 1, rack 0.2, zone 0.05, region 0.02",
  parameters,
  create: (params, env) => new TopologyAffinityScorer(env.name, params),
};
