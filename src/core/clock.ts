/**
 * Time source for every deciding component (scheduler, flow control, engine).
 * Milliseconds as a float; monotonic within one clock. The gateway passes a wall clock,
 * the fleet simulator a virtual one, so the same code runs in both.
 */
export interface Clock {
  /** Current time in milliseconds (monotonic, origin unspecified). */
  now(): number;
}

/** Wall clock backed by `performance.now()` (monotonic, sub-millisecond). */
export const wallClock: Clock = { now: () => performance.now() };

/** A clock that only moves when told: for tests and virtual-time hosts. */
export class ManualClock implements Clock {
  constructor(private current = 0) {}

  now(): number {
    return this.current;
  }

  /** Moves time forward to `ms`; never backwards. */
  set(ms: number): void {
    if (ms < this.current) throw new Error(`clock cannot go back from ${this.current} to ${ms}`);
    this.current = ms;
  }

  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.set(this.current + ms);
  }
}
