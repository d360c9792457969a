/**
 * `npm run bench -- mooncake-working-set [--fleet-tokens 13786624]`: why Mooncake at 4× cannot reach
 * 98% of its ideal hit ceiling on 16 replicas (docs/routing-policy.md). For the trace windows that
 * `llmd simulate examples/scenarios/mooncake-16.yaml` replays at time scales 2, 4 and 8 (300 simulated
 * s, the first 100 s warm-up), it replays the requests' 512-token `hash_ids` through ONE LRU cache —
 * the fleet's KV pooled, routed perfectly — and prints the distinct tokens referenced, the share of
 * the infinite-cache ceiling an LRU of the fleet's size captures, and the LRU size that captures 98%.
 * Hits count whole blocks from the prompt's start, never the last partial block.
 */
import { parseArgs } from "node:util";
import { readLines } from "../src/workload/trace-files.ts";

const BLOCK_TOKENS = 512;
const { values } = parseArgs({ options: { "fleet-tokens": { type: "string", default: "13786624" } } });
const fleetTokens = Number(values["fleet-tokens"]);

interface TraceRequest {
  timestamp: number;
  input_length: number;
  hash_ids: number[];
}

const trace: TraceRequest[] = readLines("mooncake-fast25/conversation_trace.jsonl").map((l) => JSON.parse(l));

/** Blocks the request fills completely (a partial last block is never cached). */
function fullBlocks(r: TraceRequest): number[] {
  return r.input_length === r.hash_ids.length * BLOCK_TOKENS ? r.hash_ids : r.hash_ids.slice(0, -1);
}

/** Token-weighted hit rate of one LRU cache of `capacityTokens` over `requests`, measured from `fromMs`. */
function lruHitRate(requests: readonly TraceRequest[], capacityTokens: number, fromMs: number): number {
  const capacity = Math.floor(capacityTokens / BLOCK_TOKENS);
  const cache = new Map<number, true>(); // insertion order = recency
  let hit = 0;
  let total = 0;
  for (const r of requests) {
    const full = fullBlocks(r);
    let h = 0;
    while (h < full.length && cache.has(full[h]!)) h++;
    if (r.timestamp >= fromMs) {
      hit += h * BLOCK_TOKENS;
      total += r.input_length;
    }
    for (const b of full) {
      cache.delete(b);
      cache.set(b, true);
      if (cache.size > capacity) cache.delete(cache.keys().next().value!);
    }
  }
  return hit / total;
}

/** Smallest LRU size (within 0.1 M tokens) whose hit rate reaches `share` of `ideal`. */
function sizeFor(requests: readonly TraceRequest[], share: number, ideal: number, fromMs: number): number {
  let lo = BLOCK_TOKENS;
  let hi = 4 * fleetTokens;
  while (hi - lo > 100_000) {
    const mid = Math.floor((lo + hi) / 2);
    if (lruHitRate(requests, mid, fromMs) >= share * ideal) hi = mid;
    else lo = mid;
  }
  return hi;
}

const rows = [2, 4, 8].map((timeScale) => {
  const endMs = 300_000 * timeScale;
  const fromMs = 100_000 * timeScale;
  const requests = trace.filter((r) => r.timestamp < endMs);
  const distinct = new Set(requests.flatMap(fullBlocks)).size * BLOCK_TOKENS;
  const ideal = lruHitRate(requests, Number.POSITIVE_INFINITY, fromMs);
  const fleet = lruHitRate(requests, fleetTokens, fromMs);
  return {
    "time scale": `${timeScale}×`,
    "trace window s": `0–${endMs / 1000} (measured from ${fromMs / 1000})`,
    "distinct tokens": `${(distinct / 1e6).toFixed(1)} M`,
    "ideal hit": `${(ideal * 100).toFixed(1)}%`,
    [`captured by one LRU of ${(fleetTokens / 1e6).toFixed(2)} M`]: `${((fleet / ideal) * 100).toFixed(1)}%`,
    "LRU size for 98%": `${(sizeFor(requests, 0.98, ideal, fromMs) / 1e6).toFixed(1)} M`,
  };
});
console.table(rows);
