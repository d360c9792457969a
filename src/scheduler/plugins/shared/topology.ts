/**
 * Topology proximity shared by `topology-affinity-filter` and `topology-affinity-scorer`: the
 * `Topology` map `topology-extractor` publishes and the tiers an endpoint can share with its P/D
 * peer (`peer-endpoint`, set by `disagg-profile-handler`). Same host implies same rack, zone and
 * region; a missing or empty value never matches, not even another missing one (llm-d).
 */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { attributeKey, PEER_ENDPOINT_ATTRIBUTE, TOPOLOGY, type Topology } from "../../framework/data-keys.ts";
import type { SchedulingContext } from "../../framework/types.ts";

/** Tiers from tightest to loosest. */
export const TIERS = ["host", "rack", "zone", "region"] as const;
/** A topology tier. */
export type Tier = (typeof TIERS)[number];

const FIELD: Record<Tier, keyof Topology> = {
  host: "hostname",
  rack: "rack",
  zone: "zone",
  region: "region",
};

/** Default `topology-extractor` instance name. */
export const DEFAULT_TOPOLOGY_PRODUCER = "topology-extractor";

/** The `Topology` map of producer `producerName` for this request, if it ran. */
export function readTopologies(
  ctx: SchedulingContext,
  producerName: string,
): ReadonlyMap<string, Topology> | undefined {
  const value = ctx.state.get(attributeKey(TOPOLOGY, producerName));
  return value instanceof Map ? (value as ReadonlyMap<string, Topology>) : undefined;
}

/** The peer's topology, when a peer was published and has at least one non-empty field. */
export function peerTopology(
  ctx: SchedulingContext,
  topologies: ReadonlyMap<string, Topology> | undefined,
): Topology | undefined {
  const peer = ctx.request.attributes.get(PEER_ENDPOINT_ATTRIBUTE) as Endpoint | undefined;
  const topology = peer && topologies?.get(peer.metadata.key);
  return topology && TIERS.some((t) => topology[FIELD[t]]) ? topology : undefined;
}

/** The tightest tier `a` and `b` share, or undefined when none matches. */
export function sharedTier(a: Topology | undefined, b: Topology): Tier | undefined {
  if (!a) return undefined;
  return TIERS.find((t) => {
    const value = a[FIELD[t]];
    return value !== undefined && value !== "" && value === b[FIELD[t]];
  });
}
