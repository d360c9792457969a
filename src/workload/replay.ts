/**
 * What trace replays (Mooncake, Azure) share: a window of the trace, and arrival jitter, which
 * lets a fixed trace be run under several seeds.
 */
import { LlmdError } from "../api/errors.ts";
import { Rng } from "./rng.ts";

/** Where a replay starts and how its arrivals are perturbed. */
export interface ReplayOptions {
  /** Arrival-rate multiplier: 2 replays the trace twice as fast. */
  timeScale: number;
  /** Trace second the replay starts at (rows before it are skipped; default 0). */
  startS?: number;
  /** Rows to replay (first N from `startS`; default all). */
  limit?: number;
  /** Each arrival is delayed by up to this many ms (replay time), drawn from `seed` (default 0). */
  jitterMs?: number;
  seed?: number;
}

/**
 * A replay window: the rows at or after `startS` seconds of trace time, then the first `limit` of
 * them. Replays re-time each row from `startS`, so a window starts at time zero as the trace does.
 * A window that starts after a trace's last arrival is an `invalid_scenario` error, not an empty run.
 */
export function replayWindow<T>(
  rows: readonly T[],
  atMs: (row: T) => number,
  window: { startS?: number; limit?: number },
): T[] {
  const startMs = (window.startS ?? 0) * 1000;
  if (rows.length === 0) return [];
  const from = rows.findIndex((row) => atMs(row) >= startMs);
  if (from < 0) {
    const lastS = atMs(rows.at(-1)!) / 1000;
    throw new LlmdError(
      "invalid_scenario",
      `workload.startS ${window.startS} s is after the trace's last arrival (${lastS.toFixed(1)} s)`,
    );
  }
  return rows.slice(from, window.limit === undefined ? undefined : from + window.limit);
}

/**
 * Replay times of a trace's rows: from the window's start, sped up by the time scale, each delayed
 * by a seeded draw under `jitterMs` and never before the previous arrival, so the trace's order
 * holds. A fixed trace replays the same way under every seed (seeds only break ties); a jitter of
 * a millisecond leaves its load as it is and makes each seed a run of its own.
 */
export class ReplayClock {
  private readonly startMs: number;
  private readonly rng: Rng | undefined;
  private lastMs = 0;

  constructor(private readonly options: ReplayOptions) {
    this.startMs = (options.startS ?? 0) * 1000;
    this.rng = options.jitterMs ? new Rng(`replay-jitter:${options.seed ?? 1}`) : undefined;
  }

  /** Replay time (ms) of the next row, recorded at `traceMs`. */
  next(traceMs: number): number {
    const jitter = this.rng ? this.rng.next() * this.options.jitterMs! : 0;
    this.lastMs = Math.max(this.lastMs, (traceMs - this.startMs) / this.options.timeScale + jitter);
    return this.lastMs;
  }
}
