/**
 * A minimal host loop for one engine in virtual time: steps back to back until idle. Used by tests and
 * benchmarks; the sim and the fleet simulator run their own loops with the same contract.
 */
import type { Engine, StepResult } from "./types.ts";

/** Per-request timeline in engine ms. */
export interface RequestTimes {
  firstTokenMs: number;
  finishMs: number;
  cachedTokens: number;
  generated: number;
}

/**
 * Runs steps from `startMs` until nothing is left (or `maxSteps`), calling `onStep` after each.
 * Returns the engine time at the end and each finished request's timeline (times are step ends).
 */
export function runUntilIdle(
  engine: Engine,
  startMs = 0,
  onStep?: (step: StepResult, endMs: number) => void,
  maxSteps = 10_000_000,
): { endMs: number; steps: number; times: Map<string, RequestTimes> } {
  const times = new Map<string, RequestTimes>();
  let now = startMs;
  let steps = 0;
  for (let step = engine.step(now); step && steps < maxSteps; step = engine.step(now)) {
    now += step.durationMs;
    steps++;
    for (const o of step.outputs) record(times, o.id, o.first, o.finished, now, o.cachedTokens, o.generated);
    onStep?.(step, now);
  }
  return { endMs: now, steps, times };
}

function record(
  times: Map<string, RequestTimes>,
  id: string,
  first: boolean,
  finished: boolean,
  now: number,
  cachedTokens: number,
  generated: number,
): void {
  let t = times.get(id);
  if (!t) {
    t = { firstTokenMs: Number.NaN, finishMs: Number.NaN, cachedTokens, generated };
    times.set(id, t);
  }
  if (first) t.firstTokenMs = now;
  t.cachedTokens = cachedTokens;
  t.generated = generated;
  if (finished) t.finishMs = now;
}
