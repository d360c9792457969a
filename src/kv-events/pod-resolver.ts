/**
 * Which endpoint a KV-event batch belongs to. The topic names the publishing pod (`<ip>:<port>`,
 * vLLM's default) and the batch its data-parallel rank; each rank is its own endpoint. In
 * pod-discovery mode the subscription's host is known too, which settles topics that name no
 * endpoint (a custom topic, or a rank's port).
 */

/** Where an endpoint is: the fields of the router's endpoint metadata the resolver reads. */
export interface PodLocation {
  /** The endpoint key the index files its blocks under. */
  key: string;
  address: string;
  port: number;
  dpRank?: number;
}

/** Resolves (topic pod, subscription host, rank) → endpoint key; rebuilt when the endpoints change. */
export class PodResolver {
  private readonly byAddressPort = new Map<string, PodLocation[]>();
  private readonly byHost = new Map<string, PodLocation[]>();
  private readonly cache = new Map<string, string | undefined>();

  constructor(locations: readonly PodLocation[]) {
    for (const location of locations) {
      push(this.byAddressPort, `${location.address}:${location.port}`, location);
      push(this.byHost, location.address, location);
    }
  }

  /** The endpoint key, or undefined when no endpoint matches. */
  resolve(topicPod: string, host: string | null, rank: number): string | undefined {
    const cacheKey = `${topicPod}|${host ?? ""}|${rank}`;
    if (this.cache.has(cacheKey)) return this.cache.get(cacheKey);
    const key = this.find(topicPod, host, rank);
    this.cache.set(cacheKey, key);
    return key;
  }

  private find(topicPod: string, host: string | null, rank: number): string | undefined {
    const sameRank = (l: PodLocation) => (l.dpRank ?? 0) === rank;
    const direct = this.byAddressPort.get(topicPod)?.find(sameRank);
    if (direct) return direct.key;
    // A topic naming host:port: another rank of that host (ranks share one topic), else no endpoint.
    const topicHost = hostOf(topicPod);
    if (topicHost !== null) return this.byHost.get(topicHost)?.find((l) => l.dpRank === rank)?.key;
    // A custom topic: the subscription's host decides.
    const onHost = host === null ? [] : (this.byHost.get(host) ?? []);
    const ranked = onHost.find((l) => l.dpRank === rank);
    if (ranked) return ranked.key;
    return onHost.length === 1 && sameRank(onHost[0]!) ? onHost[0]!.key : undefined;
  }
}

/** The host part of `host:port` (IPv6 in brackets or not), or null when there is no port. */
function hostOf(pod: string): string | null {
  const at = pod.lastIndexOf(":");
  if (at <= 0) return null;
  const host = pod.slice(0, at);
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
