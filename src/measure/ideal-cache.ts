/**
 * The ideal prefix-hit ceiling (workloads.md §6): one infinite cache that has seen every earlier
 * admitted request. A request's hit is its longest leading run of already-seen segments, counted
 * in whole engine blocks and capped at `inputTokens − 1` (the engine always recomputes the last
 * token), exactly like the engine's own accounting. Segment identities are chained, so a segment
 * only matches after the same prefix.
 */
import { mix32, NamespaceHashes } from "../workload/rng.ts";
import type { Segment } from "../workload/types.ts";
import { KeySet } from "./key-set.ts";

const H2_BITS_MASK = 0x1f;
const TWO_30 = 1 << 30;

/** Infinite prefix cache over segment chains. */
export class IdealPrefixCache {
  private readonly seen = new KeySet();
  private readonly nsHashes = new NamespaceHashes();

  /** @param blockTokens engine block size in tokens (> 0). */
  constructor(private readonly blockTokens: number) {}

  /** Hit tokens this request would get, then records its segments as seen. */
  lookupAndInsert(segments: readonly Segment[], inputTokens: number): number {
    let h1 = 0x9747b28c;
    let h2 = 0x5bd1e995;
    let run = 0;
    let matching = true;
    for (const s of segments) {
      const ns = this.nsHashes.of(s.ns);
      h1 = mix32(mix32(mix32(h1, ns), s.id), s.tokens);
      h2 = mix32(mix32(mix32(h2 ^ 0x27d4eb2f, s.id), ns), s.tokens);
      // A 35-bit identity (30 bits of h1, 5 of h2): collisions stay negligible at tens of
      // millions of segments.
      const key = (h2 & H2_BITS_MASK) * TWO_30 + (h1 >>> 2);
      const seenBefore = !this.seen.add(key);
      if (matching && seenBefore) run += s.tokens;
      else matching = false;
    }
    return wholeBlocks(Math.min(run, inputTokens - 1), this.blockTokens);
  }
}

/** `tokens` rounded down to whole blocks (never negative). */
export function wholeBlocks(tokens: number, blockTokens: number): number {
  return tokens <= 0 ? 0 : Math.floor(tokens / blockTokens) * blockTokens;
}
