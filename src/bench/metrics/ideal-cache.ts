/**
 * The ideal prefix-hit ceiling (workloads.md §6): one infinite cache that has seen every earlier
 * admitted request. A request's hit is its longest leading run of already-seen segments, counted
 * in whole engine blocks and capped at `inputTokens − 1` (the engine always recomputes the last
 * token), exactly like the engine's own accounting. Segment identities are chained, so a segment
 * only matches after the same prefix.
 */
import { fnv1a32, mix32 } from "../workloads/rng.ts";
import type { Segment } from "../workloads/types.ts";
import { KeySet } from "./key-set.ts";

const SHARDS = 32;
const TWO_30 = 1 << 30;

/** Infinite prefix cache over segment chains. */
export class IdealPrefixCache {
  private readonly seen = new KeySet();
  private readonly nsHashes = new Map<string, number>();
  private lastNs = "";
  private lastNsHash = 0;

  /** @param blockTokens engine block size in tokens (> 0). */
  constructor(private readonly blockTokens: number) {}

  /** Hit tokens this request would get, then records its segments as seen. */
  lookupAndInsert(segments: readonly Segment[], inputTokens: number): number {
    let h1 = 0x9747b28c;
    let h2 = 0x5bd1e995;
    let run = 0;
    let matching = true;
    for (const s of segments) {
      const ns = this.nsHash(s.ns);
      h1 = mix32(mix32(mix32(h1, ns), s.id), s.tokens);
      h2 = mix32(mix32(mix32(h2 ^ 0x27d4eb2f, s.id), ns), s.tokens);
      // A 35-bit identity (30 bits of h1, 5 of h2): collisions stay negligible at tens of
      // millions of segments.
      const key = (h2 & (SHARDS - 1)) * TWO_30 + (h1 >>> 2);
      const seenBefore = !this.seen.add(key);
      if (matching && seenBefore) run += s.tokens;
      else matching = false;
    }
    return wholeBlocks(Math.min(run, inputTokens - 1), this.blockTokens);
  }

  private nsHash(ns: string): number {
    // Consecutive segments almost always share a namespace: skip the map lookup then.
    if (ns === this.lastNs) return this.lastNsHash;
    let h = this.nsHashes.get(ns);
    if (h === undefined) {
      h = fnv1a32(ns);
      this.nsHashes.set(ns, h);
    }
    this.lastNs = ns;
    this.lastNsHash = h;
    return h;
  }
}

/** `tokens` rounded down to whole blocks (never negative). */
export function wholeBlocks(tokens: number, blockTokens: number): number {
  return tokens <= 0 ? 0 : Math.floor(tokens / blockTokens) * blockTokens;
}
