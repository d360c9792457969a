/**
 * Drives one engine in wall time: engine time runs `speed` times faster than the wall clock.
 * One step is in flight at a time; its outputs are delivered when its (scaled) duration has elapsed,
 * and the next step starts right then. One timer at a time, no busy loop; idle when there is no work.
 */
import { type Clock, wallClock } from "../core/clock.ts";
import type { AddRejection, Engine, EngineRequest, StepOutput, StepResult } from "../engine/types.ts";

/** Receives a request's step outputs; `atMs` is the engine time at which they became visible. */
export interface OutputSink {
  onOutput(output: StepOutput, atMs: number): void;
}

/** Below this many wall ms a step end is delivered on the next turn instead of via a timer. */
const MIN_TIMER_MS = 1;

/** The host loop around one engine. */
export class EngineDriver {
  private readonly sinks = new Map<string, OutputSink>();
  private readonly origin: number;
  private timer:
    | { kind: "timeout"; handle: NodeJS.Timeout }
    | { kind: "immediate"; handle: NodeJS.Immediate }
    | null = null;
  /** Wall ms the host delivered steps late; excluded from engine time so a busy host slows, not skews, it. */
  private lagMs = 0;
  /** Latest engine time handed out. */
  private issuedMs = 0;

  /**
   * @param speed engine ms per wall ms (> 0); 10 runs the model 10× faster than real time.
   */
  constructor(
    readonly engine: Engine,
    private readonly speed: number,
    private readonly clock: Clock = wallClock,
  ) {
    this.origin = clock.now();
  }

  /** Engine time now, in ms since the driver started; never decreases. */
  now(): number {
    this.issuedMs = Math.max(this.issuedMs, (this.clock.now() - this.origin - this.lagMs) * this.speed);
    return this.issuedMs;
  }

  /** Requests submitted and not yet finished or aborted (running + waiting). */
  get inFlight(): number {
    return this.sinks.size;
  }

  /** Queues a request; `sink` gets its outputs until it finishes or is aborted. */
  submit(req: EngineRequest, sink: OutputSink): AddRejection | null {
    const rejection = this.engine.add(req, this.now());
    if (rejection) return rejection;
    this.sinks.set(req.id, sink);
    if (this.timer === null) this.timer = { kind: "immediate", handle: setImmediate(this.runStep) };
    return null;
  }

  /** Removes a request from the engine at once (its blocks are freed); no more outputs reach its sink. */
  abort(id: string): void {
    if (this.sinks.delete(id)) this.engine.abort(id);
  }

  /** Stops the loop and aborts every request still in the engine. */
  close(): void {
    if (this.timer?.kind === "timeout") clearTimeout(this.timer.handle);
    if (this.timer?.kind === "immediate") clearImmediate(this.timer.handle);
    this.timer = null;
    for (const id of [...this.sinks.keys()]) this.abort(id);
  }

  private readonly runStep = (): void => {
    this.timer = null;
    const step = this.engine.step(this.now());
    if (step === null) return;
    const endMs = step.startMs + step.durationMs;
    const dueWallMs = this.origin + this.lagMs + endMs / this.speed;
    const delay = dueWallMs - this.clock.now();
    const deliver = () => this.deliver(step, endMs, dueWallMs);
    this.timer =
      delay < MIN_TIMER_MS
        ? { kind: "immediate", handle: setImmediate(deliver) }
        : { kind: "timeout", handle: setTimeout(deliver, delay) };
  };

  private deliver(step: StepResult, endMs: number, dueWallMs: number): void {
    this.lagMs += Math.max(0, this.clock.now() - dueWallMs);
    this.issuedMs = Math.max(this.issuedMs, endMs);
    for (const output of step.outputs) {
      const sink = this.sinks.get(output.id);
      if (!sink) continue;
      if (output.finished) this.sinks.delete(output.id);
      sink.onOutput(output, endMs);
    }
    this.runStep();
  }
}
