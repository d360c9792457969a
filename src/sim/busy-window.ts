/**
 * How busy the simulated GPU was over the last window of engine time: the steps the engine ran,
 * as intervals, pruned past the window. What DCGM's `DCGM_FI_DEV_GPU_UTIL` reports (the share of
 * time a kernel was running), derived from the engine's own timeline.
 */

/** See the module comment. */
export class BusyWindow {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];

  /** `windowMs` of engine time (> 0). */
  constructor(readonly windowMs: number) {}

  /** A step ran on `[startMs, startMs + durationMs)` of engine time (steps come in time order). */
  add(startMs: number, durationMs: number): void {
    this.prune(startMs - this.windowMs);
    this.starts.push(startMs);
    this.ends.push(startMs + durationMs);
  }

  /** Busy share of `(nowMs − windowMs, nowMs]`, in [0, 1]. */
  fraction(nowMs: number): number {
    const from = nowMs - this.windowMs;
    this.prune(from);
    let busy = 0;
    for (let i = 0; i < this.starts.length; i++)
      busy += Math.max(0, Math.min(this.ends[i]!, nowMs) - Math.max(this.starts[i]!, from));
    return Math.min(1, busy / this.windowMs);
  }

  /** Drops the steps that ended by `fromMs`. */
  private prune(fromMs: number): void {
    let drop = 0;
    while (drop < this.ends.length && this.ends[drop]! <= fromMs) drop++;
    this.starts.splice(0, drop);
    this.ends.splice(0, drop);
  }
}
