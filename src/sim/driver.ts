/**
 * Drives one engine in wall time: engine time runs `speed` times faster than the wall clock.
 *
 * Steps sit on an absolute engine timeline, like a GPU that keeps running while its host is busy:
 * the next step starts at the previous step's end, not at the moment the host got round to
 * delivering it, so timer slop (node timers fire ≥ 1 ms late) does not stretch every step. No request
 * joins a step that began before it arrived: steps already due when it arrives are delivered first
 * (they ran without it), and a step never starts before the latest added request. Only when the host falls
 * more than `catchUpMs` wall ms behind (a real stall) is the excess excluded from engine time, so a
 * stalled host pauses the model instead of inflating its latencies or bursting through a backlog.
 * One timer at a time, no busy loop; idle when there is no work.
 */
import { type Clock, wallClock } from "../core/clock.ts";
import type { AddRejection, Engine, EngineRequest, StepOutput, StepResult } from "../engine/types.ts";
import { BusyWindow } from "./busy-window.ts";

/** Engine ms over which the GPU's busy share is reported (DCGM samples utilisation per second). */
const BUSY_WINDOW_MS = 1000;

/** Receives a request's step outputs; `atMs` is the engine time at which they became visible. */
export interface OutputSink {
  onOutput(output: StepOutput, atMs: number): void;
}

/** How the driver waits on the host: node timers by default; tests inject a deterministic host. */
export interface HostTimers {
  /** Calls `fn` once after about `delayMs` wall ms (≤ 0: on the next turn); returns a cancel. */
  schedule(delayMs: number, fn: () => void): () => void;
}

/**
 * Default bound on how far the timeline may trail the host, wall ms. On a loaded 2-core host, 50K-token
 * prompts (tokenized and hashed on the event loop) delay sims beyond 50 ms many times a minute; a GPU
 * would not have waited, so such delays are caught up rather than excluded.
 */
const DEFAULT_CATCH_UP_MS = 250;

/** Below this many wall ms a step end is delivered on the next turn instead of via a timer. */
const MIN_TIMER_MS = 1;

/** Node's timers: `setImmediate` for due-now work, `setTimeout` otherwise. */
export const nodeTimers: HostTimers = {
  schedule(delayMs, fn) {
    if (delayMs < MIN_TIMER_MS) {
      const handle = setImmediate(fn);
      return () => clearImmediate(handle);
    }
    const handle = setTimeout(fn, delayMs);
    return () => clearTimeout(handle);
  },
};

/** Host-side timing the driver observed; wall ms. */
export interface HostTiming {
  /** Step outputs delivered. */
  steps: number;
  /** Sum over steps of how late each was delivered after its due wall time (early counts 0). */
  lateMs: number;
  /** Wall time excluded from engine time because the host was more than `catchUpMs` behind. */
  stalledMs: number;
}

/** Optional knobs of the driver. */
export interface DriverOptions {
  clock?: Clock;
  timers?: HostTimers;
  /**
   * Wall ms the timeline may trail the host before the excess is treated as a stall and excluded
   * from engine time (≥ 0; default 250). Within it, late steps are caught up back to back.
   */
  catchUpMs?: number;
  /** Called with each step's delivery lateness, wall ms (negative when a timer fired early). */
  onStepDelivered?(lateMs: number): void;
}

/** The host loop around one engine. */
export class EngineDriver {
  /** The steps of the last second of engine time (the simulated GPU's utilisation). */
  readonly busy = new BusyWindow(BUSY_WINDOW_MS);
  private readonly sinks = new Map<string, OutputSink>();
  private readonly clock: Clock;
  private readonly timers: HostTimers;
  private readonly catchUpMs: number;
  private readonly origin: number;
  private cancelTimer: (() => void) | null = null;
  /** The step whose outputs are awaiting delivery, if any. */
  private inFlightStep: { step: StepResult; endMs: number; dueWallMs: number } | null = null;
  /** Wall ms excluded from engine time (host stalls). */
  private stalledMs = 0;
  /** Latest engine time handed out. */
  private issuedMs = 0;
  /** Engine time the last step ended: where the next one starts if work is waiting. */
  private freeAtMs = 0;
  /** Engine time the latest request was added: no step may start before it. */
  private lastAddMs = 0;
  private steps = 0;
  private lateMs = 0;

  /**
   * @param speed engine ms per wall ms (> 0); 10 runs the model 10× faster than real time.
   */
  constructor(
    readonly engine: Engine,
    private readonly speed: number,
    private readonly options: DriverOptions = {},
  ) {
    this.clock = options.clock ?? wallClock;
    this.timers = options.timers ?? nodeTimers;
    this.catchUpMs = options.catchUpMs ?? DEFAULT_CATCH_UP_MS;
    this.origin = this.clock.now();
  }

  /** Engine time now, in ms since the driver started; never decreases. */
  now(): number {
    this.issuedMs = Math.max(this.issuedMs, this.engineTimeAt(this.clock.now()));
    return this.issuedMs;
  }

  /** Requests submitted and not yet finished or aborted (running + waiting). */
  get inFlight(): number {
    return this.sinks.size;
  }

  /** What the host's timing has looked like so far. */
  hostTiming(): HostTiming {
    return { steps: this.steps, lateMs: this.lateMs, stalledMs: this.stalledMs };
  }

  /** Queues a request; `sink` gets its outputs until it finishes or is aborted. */
  submit(req: EngineRequest, sink: OutputSink): AddRejection | null {
    this.deliverOverdueSteps();
    const arrivedMs = this.now();
    const rejection = this.engine.add(req, arrivedMs);
    if (rejection) return rejection;
    this.lastAddMs = arrivedMs;
    this.sinks.set(req.id, sink);
    if (this.cancelTimer === null) this.cancelTimer = this.timers.schedule(0, this.runStep);
    return null;
  }

  /** Removes a request from the engine at once (its blocks are freed); no more outputs reach its sink. */
  abort(id: string): void {
    if (this.sinks.delete(id)) this.engine.abort(id);
  }

  /** Stops the loop and aborts every request still in the engine. */
  close(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.inFlightStep = null;
    for (const id of [...this.sinks.keys()]) this.abort(id);
  }

  /**
   * Delivers the steps that ended (on the timeline) before now but whose timers have not fired yet:
   * the GPU ran them without the request that is arriving.
   */
  private deliverOverdueSteps(): void {
    while (this.inFlightStep !== null && this.inFlightStep.dueWallMs <= this.clock.now()) {
      this.cancelTimer?.();
      this.deliver();
    }
  }

  private engineTimeAt(wallMs: number): number {
    return (wallMs - this.origin - this.stalledMs) * this.speed;
  }

  private wallTimeOf(engineMs: number): number {
    return this.origin + this.stalledMs + engineMs / this.speed;
  }

  private readonly runStep = (): void => {
    this.cancelTimer = null;
    const startMs = Math.max(this.freeAtMs, this.lastAddMs);
    const step = this.engine.step(startMs);
    if (step === null) return;
    const behindMs = this.clock.now() - this.wallTimeOf(startMs);
    if (behindMs > this.catchUpMs) this.stalledMs += behindMs - this.catchUpMs;
    const endMs = step.startMs + step.durationMs;
    this.busy.add(step.startMs, step.durationMs);
    this.freeAtMs = endMs;
    const dueWallMs = this.wallTimeOf(endMs);
    this.inFlightStep = { step, endMs, dueWallMs };
    this.cancelTimer = this.timers.schedule(dueWallMs - this.clock.now(), this.deliver);
  };

  /** Delivers the in-flight step's outputs, then starts the next step. */
  private readonly deliver = (): void => {
    const inFlight = this.inFlightStep;
    if (inFlight === null) return;
    const { step, endMs, dueWallMs } = inFlight;
    this.cancelTimer = null;
    this.inFlightStep = null;
    const lateMs = this.clock.now() - dueWallMs;
    this.steps++;
    this.lateMs += Math.max(0, lateMs);
    this.options.onStepDelivered?.(lateMs);
    this.issuedMs = Math.max(this.issuedMs, endMs);
    for (const output of step.outputs) {
      const sink = this.sinks.get(output.id);
      if (!sink) continue;
      if (output.finished) this.sinks.delete(output.id);
      sink.onOutput(output, endMs);
    }
    this.runStep();
  };
}
