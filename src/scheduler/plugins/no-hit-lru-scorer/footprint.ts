/**
 * Router-side estimate of the KV each endpoint's live sessions will come back for: the latest
 * prompt size of every named session, on the endpoint that last served it, until the session has
 * been idle for `idleMs`. A session's context stays cached where it ran between turns, so this is
 * what a new session crowds when it is placed there, unlike the in-flight load, which is empty
 * while the sessions think.
 */

interface Entry {
  endpoint: string;
  tokens: number;
  lastMs: number;
}

/** Per-endpoint sum of live sessions' latest prompt tokens. */
export class SessionFootprints {
  private readonly sessions = new Map<string, Entry>();
  private readonly byEndpoint = new Map<string, number>();

  constructor(private readonly idleMs: number) {}

  /** `session` (non-empty) now runs on `endpoint` with a prompt of `tokens`. */
  record(session: string, endpoint: string, tokens: number, nowMs: number): void {
    const old = this.sessions.get(session);
    if (old) {
      this.add(old.endpoint, -old.tokens);
      this.sessions.delete(session); // re-inserted last, so the map stays in order of last use
    }
    this.sessions.set(session, { endpoint, tokens, lastMs: nowMs });
    this.add(endpoint, tokens);
  }

  /** Tokens of live sessions last served by `endpoint` (sessions idle past idleMs are dropped first). */
  of(endpoint: string, nowMs: number): number {
    this.expire(nowMs);
    return this.byEndpoint.get(endpoint) ?? 0;
  }

  /** Sessions currently tracked (for tests). */
  get size(): number {
    return this.sessions.size;
  }

  private expire(nowMs: number): void {
    // Map order is insertion order and record() re-inserts, so the oldest entries come first.
    for (const [session, entry] of this.sessions) {
      if (nowMs - entry.lastMs <= this.idleMs) break;
      this.sessions.delete(session);
      this.add(entry.endpoint, -entry.tokens);
    }
  }

  private add(endpoint: string, tokens: number): void {
    const total = (this.byEndpoint.get(endpoint) ?? 0) + tokens;
    if (total <= 0) this.byEndpoint.delete(endpoint);
    else this.byEndpoint.set(endpoint, total);
  }
}
