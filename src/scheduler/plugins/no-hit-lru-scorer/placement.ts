/**
 * Where `no-hit-lru-scorer` sends a named session's cold request with `coldPlacement: footprint`:
 * by the KV its endpoints' live sessions hold (SessionFootprints), instead of by recency alone.
 */

/** How a cold request chooses among the endpoints where it fits, and where it goes when it fits nowhere. */
export interface FootprintRule {
  /**
   * `least`: the smallest footprint (spread); `best`: the fullest endpoint it still fits on (pack);
   * `any`: every endpoint it fits on alike (the load scorers choose).
   */
  fit: "least" | "best" | "any";
  /**
   * `lru`: recency decides (overflow spreads); `concentrate`: the endpoint furthest over its KV;
   * `over`: the endpoints already past their KV, by recency (recency over all when none is).
   */
  overflow: "lru" | "concentrate" | "over";
}

/**
 * Rewrites `scores` (recency scores in (0, 1], kept as a 0.1 tie-break) for a prompt of `own`
 * tokens. `footprint[i]` and `capacity[i]` are endpoint i's live sessions' tokens and its KV
 * tokens (capacity 0 = unknown: never fits). Where the prompt fits (footprint + own ≤ capacity)
 * endpoints score by `rule.fit`, the others 0. Rotation by count evens the number of sessions per
 * endpoint, but Claude Code sessions range from 10 K to 450 K tokens, so equal counts push some
 * endpoints past their KV while others have room, and an endpoint past its KV evicts its own
 * sessions. When the prompt fits nowhere, `concentrate` sends it to the endpoint already furthest
 * over its KV, so the endpoints still within theirs keep their sessions' reuse.
 */
export function placeByFootprint(
  scores: Float64Array,
  footprint: Float64Array,
  capacity: Float64Array,
  own: number,
  rule: FootprintRule,
): void {
  const n = scores.length;
  let fits = 0;
  let largest = 0;
  for (let i = 0; i < n; i++) {
    if (capacity[i]! > 0 && footprint[i]! + own <= capacity[i]!) fits++;
    largest = Math.max(largest, footprint[i]!);
  }
  if (fits === 0) {
    if (rule.overflow === "concentrate") concentrate(scores, footprint, capacity);
    if (rule.overflow === "over") onlyOver(scores, footprint, capacity);
    return;
  }
  for (let i = 0; i < n; i++) {
    const f = footprint[i]!;
    const c = capacity[i]!;
    if (c <= 0 || f + own > c) scores[i] = 0;
    else {
      const fill =
        rule.fit === "any" ? 1 : rule.fit === "best" ? (f + own) / c : largest > 0 ? 1 - f / largest : 1;
      scores[i] = 0.9 * fill + 0.1 * scores[i]!;
    }
  }
}

/**
 * Only endpoints already past their KV (or, when none is, the fullest) stay candidates, scoring
 * 0.9 × their fill relative to the fullest plus 0.1 × recency; the others score 0.
 */
function concentrate(scores: Float64Array, footprint: Float64Array, capacity: Float64Array): void {
  let fullest = 0;
  for (let i = 0; i < scores.length; i++)
    if (capacity[i]! > 0) fullest = Math.max(fullest, footprint[i]! / capacity[i]!);
  if (fullest === 0) return;
  const floor = Math.min(1, fullest);
  for (let i = 0; i < scores.length; i++) {
    const fill = capacity[i]! > 0 ? footprint[i]! / capacity[i]! : 0;
    scores[i] = fill >= floor ? 0.9 * (fill / fullest) + 0.1 * scores[i]! : 0;
  }
}

/** Endpoints already past their KV keep their recency score, the others 0 (unchanged when none is). */
function onlyOver(scores: Float64Array, footprint: Float64Array, capacity: Float64Array): void {
  const over = (i: number) => capacity[i]! > 0 && footprint[i]! > capacity[i]!;
  let any = false;
  for (let i = 0; i < scores.length; i++) any ||= over(i);
  if (!any) return;
  for (let i = 0; i < scores.length; i++) if (!over(i)) scores[i] = 0;
}
