/**
 * A noise floor for event-loop blocks: a fixed amount of arithmetic, calibrated at start to take
 * about as long as a turn's typical block, timed between the turns in the same process. Its spread
 * is the machine's (preemption, steal, frequency), not the router's: when it reads 3 ms at p99, a
 * 3 ms p99 block of ours is no evidence of our work.
 */

/** Where the loop's result goes, so the arithmetic is not optimised away. */
let sink = 0;

function spin(rounds: number): void {
  let h = 0x811c9dc5 ^ sink;
  for (let i = 0; i < rounds; i++) h = Math.imul(h ^ i, 0x01000193);
  sink = h;
}

/** Fixed work that took about `ms` in the fastest of its calibration runs. */
export class BusyControl {
  private readonly rounds: number;

  constructor(readonly ms: number) {
    const probe = 100_000;
    let fastest = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 50; run++)
      fastest = Math.min(
        fastest,
        timed(() => spin(probe)),
      );
    this.rounds = Math.max(1, Math.round((probe * ms) / fastest));
  }

  /** Runs the work once; its wall time, ms. */
  run(): number {
    return timed(() => spin(this.rounds));
  }
}

function timed(work: () => void): number {
  const t0 = performance.now();
  work();
  return performance.now() - t0;
}
