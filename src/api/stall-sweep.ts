/**
 * Stalled body reads found by one sweep per timeout instead of a timer per request: a read notes
 * when its last byte came, and a shared interval (a quarter of the timeout, so a stall is cut
 * within 1.25× it, as node checks header timeouts) ends the reads that waited longer. A request
 * then costs a set insert and delete, not a timer's insert, refresh and removal. The interval
 * stops at the first sweep that finds no read in progress.
 */

/** A read the sweep watches. */
export interface StallWatched {
  /** `Date.now()` of the read's last byte (or of its start). */
  lastReadAt: number;
  /** Called once when no byte came for the timeout; the read is no longer watched. */
  stalled(): void;
}

const SWEEP_MIN_MS = 10;
const SWEEP_MAX_MS = 30_000;

/** The reads under one timeout. */
export class StallSweep {
  private readonly reads = new Set<StallWatched>();
  private timer: NodeJS.Timeout | undefined;
  private readonly everyMs: number;

  constructor(readonly timeoutMs: number) {
    this.everyMs = Math.max(SWEEP_MIN_MS, Math.min(SWEEP_MAX_MS, timeoutMs / 4));
  }

  /** Reads watched now. */
  get size(): number {
    return this.reads.size;
  }

  watch(read: StallWatched): void {
    this.reads.add(read);
    this.timer ??= setInterval(() => this.sweep(), this.everyMs).unref();
  }

  unwatch(read: StallWatched): void {
    this.reads.delete(read);
  }

  private sweep(): void {
    if (this.reads.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = Date.now();
    for (const read of this.reads) {
      if (now - read.lastReadAt <= this.timeoutMs) continue;
      this.reads.delete(read);
      read.stalled();
    }
  }
}

const sweeps = new Map<number, StallSweep>();

/** The process's sweep for `timeoutMs` (ms, > 0), made on first use. */
export function stallSweep(timeoutMs: number): StallSweep {
  let sweep = sweeps.get(timeoutMs);
  if (!sweep) {
    sweep = new StallSweep(timeoutMs);
    sweeps.set(timeoutMs, sweep);
  }
  return sweep;
}
