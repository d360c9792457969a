/**
 * Where `no-hit-lru-scorer` sends a named session's cold request with `coldPlacement: footprint`:
 * by the KV its endpoints' live sessions hold (SessionFootprints), instead of by recency alone.
 */

/**
 * Rewrites `scores` (recency scores in (0, 1], kept as a 0.1 tie-break) for a prompt of `own`
 * tokens. `footprint[i]` and `capacity[i]` are endpoint i's live sessions' tokens and its KV
 * tokens (capacity 0 = unknown: never fits).
 *
 * - Where the prompt fits (footprint + own ≤ capacity), the smallest footprint wins and the
 *   endpoints where it does not fit score 0. Rotation by count evens the number of sessions per
 *   endpoint, but Claude Code sessions range from 10 K to 450 K tokens, so equal counts push some
 *   endpoints past their KV while others have room, and an endpoint past its KV evicts its own
 *   sessions.
 * - Where it fits nowhere but the fleet as a whole has room, recency decides (the room is
 *   scattered; any choice evicts a little).
 * - Where the fleet's summed footprint is past its summed KV, the request goes to the endpoint
 *   already fullest (concentrate). Spreading the excess instead pushes every endpoint past its
 *   KV, and under LRU an endpoint a little past its KV loses most of its sessions' reuse, not a
 *   little; concentrating keeps the others within theirs. Its sessions queue behind re-prefills.
 */
export function placeByFootprint(
  scores: Float64Array,
  footprint: Float64Array,
  capacity: Float64Array,
  own: number,
): void {
  const n = scores.length;
  let fits = 0;
  let largest = 0;
  let held = own;
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (capacity[i]! > 0 && footprint[i]! + own <= capacity[i]!) fits++;
    largest = Math.max(largest, footprint[i]!);
    held += footprint[i]!;
    total += capacity[i]!;
  }
  if (fits > 0) {
    for (let i = 0; i < n; i++) {
      const f = footprint[i]!;
      const fitsHere = capacity[i]! > 0 && f + own <= capacity[i]!;
      scores[i] = fitsHere ? 0.9 * (largest > 0 ? 1 - f / largest : 1) + 0.1 * scores[i]! : 0;
    }
  } else if (held > total) concentrate(scores, footprint, capacity);
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
