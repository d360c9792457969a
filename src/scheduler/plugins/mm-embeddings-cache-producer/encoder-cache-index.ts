/**
 * What the router believes each endpoint's encoder cache holds: per endpoint, a bounded LRU of
 * media-item hashes (insertion-ordered map; a hit moves the item to the newest end).
 */

/** See the module comment. */
export class EncoderCacheIndex {
  private readonly byEndpoint = new Map<string, Map<string, true>>();

  /** `capacity` items per endpoint (≥ 1). */
  constructor(readonly capacity: number) {}

  /** How many of `hashes` endpoint `key` holds (recency untouched: a lookup is not a use). */
  matched(key: string, hashes: readonly string[]): number {
    const cache = this.byEndpoint.get(key);
    if (!cache) return 0;
    let n = 0;
    for (const hash of hashes) if (cache.has(hash)) n++;
    return n;
  }

  /** True when some endpoint holds `hash`. */
  anywhere(hash: string): boolean {
    for (const cache of this.byEndpoint.values()) if (cache.has(hash)) return true;
    return false;
  }

  /** Endpoint `key` encoded `hashes`: they become its newest items, evicting its oldest past capacity. */
  insert(key: string, hashes: readonly string[]): void {
    let cache = this.byEndpoint.get(key);
    if (!cache) {
      cache = new Map();
      this.byEndpoint.set(key, cache);
    }
    for (const hash of hashes) {
      cache.delete(hash);
      cache.set(hash, true);
      if (cache.size > this.capacity) cache.delete(cache.keys().next().value!);
    }
  }

  /** Forgets every endpoint not in `keys` (gone from the pool). */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.byEndpoint.keys()) if (!keys.has(key)) this.byEndpoint.delete(key);
  }

  /** Items held by endpoint `key`. */
  size(key: string): number {
    return this.byEndpoint.get(key)?.size ?? 0;
  }
}
