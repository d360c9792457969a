/**
 * What makes a request cold for `no-hit-lru-scorer`, and which candidates may take a cold request
 * when `coldLoadMargin` is set.
 */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { matchRatio, type PrefixMatchResult } from "../../../kv-index/index.ts";
import { readEndpointLoad } from "../shared/inflight-load.ts";

/** The parameters cold detection reads (ratios in [0, 1] of the prompt's blocks). */
export interface ColdRule {
  coldMatchRatio: number;
  coldMaxAdvantage: number;
}

/**
 * Cold: no candidate holds even one block of the prompt (or there is no match data). With
 * `coldMatchRatio` r > 0 also when the best candidate holds less than r of the prompt's blocks and
 * no more than `coldMaxAdvantage` beyond the median candidate: the request shares only what most
 * endpoints hold (a common system prompt), so it starts a new conversation and is spread like a
 * cold prompt. A partial match only one endpoint holds keeps the request warm.
 * `ratios` is scratch space of at least `endpoints.length` entries.
 */
export function isCold(
  match: PrefixMatchResult | undefined,
  endpoints: readonly Endpoint[],
  rule: ColdRule,
  ratios: Float64Array,
): boolean {
  if (!match) return true;
  if (rule.coldMatchRatio === 0)
    return endpoints.every((e) => (match.byEndpoint.get(e.metadata.key)?.matchBlocks ?? 0) === 0);
  if (endpoints.length === 0) return true;
  const sorted = ratios.subarray(0, endpoints.length);
  for (let i = 0; i < endpoints.length; i++)
    sorted[i] = matchRatio(match.byEndpoint.get(endpoints[i]!.metadata.key));
  sorted.sort();
  const best = sorted[sorted.length - 1]!;
  const median = sorted[sorted.length >> 1]!;
  return best < rule.coldMatchRatio && best - median <= rule.coldMaxAdvantage;
}

/**
 * Zeroes the cold score of every candidate whose uncached tokens in flight (plus this request's
 * own uncached tokens there) exceed the least loaded candidate's by more than `margin` tokens, so
 * the least-recently-used rotation only chooses among replicas that are not clearly busier.
 * Without a load snapshot under `loadStateKey` every candidate counts as idle (nothing changes).
 * `loads` is scratch space of at least `endpoints.length` entries.
 */
export function excludeBusy(
  scores: Float64Array,
  state: ReadonlyMap<string, unknown>,
  loadStateKey: string,
  endpoints: readonly Endpoint[],
  margin: number,
  loads: Float64Array,
): void {
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < endpoints.length; i++) {
    const load = readEndpointLoad(state, loadStateKey, endpoints[i]!.metadata.key);
    loads[i] = load.tokens + load.requestUncachedTokens;
    if (loads[i]! < least) least = loads[i]!;
  }
  const limit = least + margin;
  for (let i = 0; i < endpoints.length; i++) if (loads[i]! > limit) scores[i] = 0;
}
