/**
 * One publisher's message stream, in order (reference §4.1): sequence numbers count up from 0 per
 * publisher. A gap (`seq > last + 1`) asks for a replay from `last + 1`; a sequence that goes
 * backwards means the publisher restarted, so what it published before is cleared and the stream is
 * replayed from 0; the first message of a stream joined mid-way asks for a replay from 0; messages
 * already applied are dropped. While a replay runs, live messages wait in a bounded buffer and are
 * applied after it. A replay that fails or times out is given up (what it would have filled is
 * counted lost) and no other is asked for during a cooldown, so a dead replay socket costs nothing.
 * Without a replay socket, gaps are counted and the stream goes on.
 */

/** One message of the stream. */
export interface SourceMessage {
  seq: bigint;
  payload: Uint8Array;
}

/** What a source does with its messages. */
export interface SourceHandlers {
  /** Applies one batch (in sequence order). */
  apply(payload: Uint8Array): void;
  /** The publisher restarted: forget what it published. */
  reset(): void;
  /** Replays from `from` (kept batches, then the end marker); null when the source has no replay socket. */
  replay: ((from: bigint) => Promise<SourceMessage[]>) | null;
  /** Wall clock, ms. */
  now(): number;
}

/** Counters of one source. */
export interface SourceStats {
  applied: number;
  duplicates: number;
  /** Gaps and joins seen. */
  gaps: number;
  restarts: number;
  replays: number;
  replayFailures: number;
  /** Sequence numbers never applied (not replayable, replay failed or buffer full). */
  lost: number;
}

/** Live messages kept while a replay runs; more are dropped (and count as a gap afterwards). */
export const REPLAY_BUFFER_LIMIT = 10_000;
/** After a failed replay, gaps are accepted without asking for another for this long, ms. */
export const REPLAY_COOLDOWN_MS = 5_000;

/** See the module comment. */
export class KvEventSource {
  private lastApplied: bigint | null = null;
  private lastLive: bigint | null = null;
  private replaying = false;
  private buffer: SourceMessage[] = [];
  private cooldownUntil = 0;
  readonly stats: SourceStats = {
    applied: 0,
    duplicates: 0,
    gaps: 0,
    restarts: 0,
    replays: 0,
    replayFailures: 0,
    lost: 0,
  };

  constructor(private readonly handlers: SourceHandlers) {}

  /** True while a replay is under way. */
  get replayInProgress(): boolean {
    return this.replaying;
  }

  /** One live message. Never waits: a replay it triggers runs in the background. */
  receive(seq: bigint, payload: Uint8Array): void {
    if (this.replaying) {
      if (this.buffer.length < REPLAY_BUFFER_LIMIT) this.buffer.push({ seq, payload });
      return;
    }
    this.handle(seq, payload, true);
  }

  private handle(seq: bigint, payload: Uint8Array, mayReplay: boolean): void {
    if (this.lastLive !== null && seq < this.lastLive) {
      this.stats.restarts++;
      this.handlers.reset();
      this.lastApplied = null;
    }
    this.lastLive = seq;
    if (this.lastApplied !== null && seq <= this.lastApplied) {
      this.stats.duplicates++;
      return;
    }
    const expected = this.lastApplied === null ? 0n : this.lastApplied + 1n;
    if (seq > expected) {
      this.stats.gaps++;
      if (mayReplay && this.handlers.replay && this.handlers.now() >= this.cooldownUntil) {
        void this.replayFrom(expected, { seq, payload }, this.handlers.replay);
        return;
      }
      this.stats.lost += Number(seq - expected);
    }
    this.applyMessage(seq, payload);
  }

  private applyMessage(seq: bigint, payload: Uint8Array): void {
    this.lastApplied = seq;
    this.stats.applied++;
    this.handlers.apply(payload);
  }

  private async replayFrom(
    from: bigint,
    first: SourceMessage,
    replay: (from: bigint) => Promise<SourceMessage[]>,
  ): Promise<void> {
    this.replaying = true;
    this.buffer = [first];
    this.stats.replays++;
    try {
      for (const m of await replay(from)) {
        if (this.lastApplied !== null && m.seq <= this.lastApplied) continue;
        const expected = this.lastApplied === null ? 0n : this.lastApplied + 1n;
        if (m.seq > expected) this.stats.lost += Number(m.seq - expected);
        this.applyMessage(m.seq, m.payload);
      }
    } catch {
      this.stats.replayFailures++;
      this.cooldownUntil = this.handlers.now() + REPLAY_COOLDOWN_MS;
    } finally {
      this.replaying = false;
      const waiting = this.buffer;
      this.buffer = [];
      for (const m of waiting) this.handle(m.seq, m.payload, false);
    }
  }
}
