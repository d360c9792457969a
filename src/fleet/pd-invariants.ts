/**
 * What a fleet run with P/D faults must show (the fault benchmark and its test check the same):
 * every request has exactly one outcome, the only failures are streams their replica's death cut
 * after the first token (earlier, the request is placed again), every P/D attempt ended one way
 * (transfer, local fallback, or its decode died) and no GPU block is still referenced once the run
 * is over.
 */
import type { FleetResult } from "./simulator.ts";

/** Outcomes a fault run may end a request with. */
const ALLOWED = new Set(["served", "failed-replica_died"]);

/** Counts of each outcome. */
export function outcomeCounts(result: FleetResult): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of result.records) {
    const outcome = r.outcome ?? "none";
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1);
  }
  return counts;
}

/** The invariants `result` breaks, one line each; empty when it holds them all. */
export function pdInvariantViolations(result: FleetResult): string[] {
  const out: string[] = [];
  const counts = outcomeCounts(result);
  for (const [outcome, n] of counts) if (!ALLOWED.has(outcome)) out.push(`${n} requests ended ${outcome}`);
  const killed = counts.get("failed-replica_died") ?? 0;
  if (killed !== result.killedRequests)
    out.push(`${killed} requests failed replica_died but deaths cut ${result.killedRequests}`);
  const pd = result.pd;
  if (pd) {
    const causes = pd.transferFailures + pd.staleTransfers + pd.prefillRefused;
    if (pd.fallbacks !== causes) out.push(`${pd.fallbacks} fallbacks for ${causes} failed legs`);
    const ended = pd.transfers + pd.fallbacks + pd.decodeLost;
    if (pd.requests !== ended) out.push(`${pd.requests} P/D requests, ${ended} ended`);
  }
  if (result.blocksInUseAtEnd !== 0)
    out.push(`${result.blocksInUseAtEnd} GPU blocks still in use at the end`);
  return out;
}
