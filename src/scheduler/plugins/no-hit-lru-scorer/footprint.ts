/**
 * Router-side estimate of each endpoint's KV working set: for every named session, the largest
 * prompt it sent to an endpoint, counted on that endpoint while a request of it runs there and
 * for `idleMs` after the last one completed. A session's context stays cached where it ran
 * between turns, so this is what a new session crowds when it is placed there (the in-flight load
 * is empty while sessions think); a session that ended or moved stops counting after the idle
 * window. A request waiting in a long queue keeps its session counted.
 */
import type { Endpoint } from "../../../endpoints/endpoint.ts";

interface Entry {
  endpoint: string;
  tokens: number;
  lastMs: number;
  inFlight: number;
}

/** Per-endpoint sum of live sessions' prompt tokens there. */
export class SessionFootprints {
  /** Keyed by session and endpoint; Map order is the order of last use (oldest first). */
  private readonly entries = new Map<string, Entry>();
  private readonly byEndpoint = new Map<string, number>();

  constructor(private readonly idleMs: number) {}

  /** `session` (non-empty) sent a prompt of `tokens` to `endpoint` at `nowMs`. */
  record(session: string, endpoint: string, tokens: number, nowMs: number): void {
    const key = entryKey(session, endpoint);
    const old = this.entries.get(key);
    if (old) this.add(endpoint, -old.tokens);
    const held = Math.max(tokens, old?.tokens ?? 0);
    this.touch(key, { endpoint, tokens: held, lastMs: nowMs, inFlight: (old?.inFlight ?? 0) + 1 });
    this.add(endpoint, held);
  }

  /** A request of `session` on `endpoint` completed at `nowMs`: the idle window starts again. */
  complete(session: string, endpoint: string, nowMs: number): void {
    const key = entryKey(session, endpoint);
    const entry = this.entries.get(key);
    if (entry) this.touch(key, { ...entry, lastMs: nowMs, inFlight: Math.max(0, entry.inFlight - 1) });
  }

  /** Tokens of live sessions on `endpoint`, excluding `session`'s own (idle entries dropped first). */
  of(endpoint: string, nowMs: number, session = ""): number {
    this.expire(nowMs);
    const own = session === "" ? 0 : (this.entries.get(entryKey(session, endpoint))?.tokens ?? 0);
    return (this.byEndpoint.get(endpoint) ?? 0) - own;
  }

  /** Session-endpoint entries currently counted (for tests). */
  get size(): number {
    return this.entries.size;
  }

  /** Re-inserts `key` last, so the map stays in order of last use. */
  private touch(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
  }

  private expire(nowMs: number): void {
    for (const [key, entry] of this.entries) {
      if (nowMs - entry.lastMs <= this.idleMs) break;
      if (entry.inFlight > 0) continue;
      this.entries.delete(key);
      this.add(entry.endpoint, -entry.tokens);
    }
  }

  private add(endpoint: string, tokens: number): void {
    const total = (this.byEndpoint.get(endpoint) ?? 0) + tokens;
    if (total <= 0) this.byEndpoint.delete(endpoint);
    else this.byEndpoint.set(endpoint, total);
  }
}

function entryKey(session: string, endpoint: string): string {
  return `${session}\u0000${endpoint}`;
}

/** KV capacity of an endpoint in tokens, from its scraped metrics (0 when unknown). */
export function kvCapacityTokens(endpoint: Endpoint): number {
  return endpoint.metrics.cacheBlockSize * endpoint.metrics.cacheNumBlocks;
}
