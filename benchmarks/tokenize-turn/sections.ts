/**
 * The synchronous sections of one timed decision: from its start until a producer hands work to a
 * thread (its `produce` returns a promise), and from that work's completion to the end. For the
 * longest one, the event loop's thread's schedule (thread-schedule.ts) at its start and its end,
 * with the tokenizer worker's threads' on-CPU time meanwhile; and the event loop's runqueue wait
 * between a handoff and the worker's reply (a worker that took the event loop's core).
 */
import type { Scheduler } from "../../src/scheduler/framework/scheduler.ts";
import type { DataProducer } from "../../src/scheduler/framework/types.ts";
import {
  type Schedule,
  type ScheduleDelta,
  scheduleDelta,
  type ThreadGroupSchedule,
  ThreadSchedule,
} from "./thread-schedule.ts";

const NOBODY: Schedule = { cpuNs: 0, waitNs: 0, slices: 0 };

/** Times a decision's sections; `open` before it, `close` after it. */
export class Sections {
  private resumed = 0;
  private resumedSchedule = NOBODY;
  private resumedWorker = NOBODY;
  private resumedOthers = NOBODY;
  /** The event loop's thread (the one that made this). */
  private readonly loop = new ThreadSchedule();
  /** The tokenizer worker's threads, once the case started them. */
  worker: ThreadGroupSchedule | null = null;
  /** Every thread of the process but the event loop's (V8's platform threads, the worker's). */
  background: ThreadGroupSchedule | null = null;
  /** With `--threads`: the threads that are neither the loop's nor the worker's, read like the worker's. */
  others: ThreadGroupSchedule | null = null;
  /** The longest section of the running turn. */
  longest = 0;
  /** Where it was (`performance.now()` times). */
  longestAt: [number, number] = [0, 0];
  /** The event loop's thread during it. */
  longestSchedule: ScheduleDelta = scheduleDelta(NOBODY, NOBODY);
  /** The worker's threads' on-CPU ms during it. */
  longestWorkerCpuMs = 0;
  /** The other threads' on-CPU ms during it (0 without `others`). */
  longestOthersCpuMs = 0;
  /** All its sections together: the turn's time on the event loop. */
  onLoop = 0;
  /** The event loop's runqueue wait between its sections (from a handoff to the reply), ms. */
  handoffWaitMs = 0;
  /** The worker's threads' on-CPU ms meanwhile. */
  handoffWorkerCpuMs = 0;
  private closedSchedule: Schedule | null = null;
  private closedWorker = NOBODY;

  /** Wraps the asynchronous producers of `scheduler` (once). */
  watch(scheduler: Scheduler): void {
    for (const producer of scheduler.parts.producers as DataProducer[]) {
      const produce = producer.produce.bind(producer);
      producer.produce = (ctx, endpoints) => {
        const pending = produce(ctx, endpoints);
        if (!pending) return pending;
        this.close();
        return pending.then(() => this.resume());
      };
    }
  }

  open(): void {
    this.longest = 0;
    this.onLoop = 0;
    this.handoffWaitMs = 0;
    this.handoffWorkerCpuMs = 0;
    this.closedSchedule = null;
    this.resume();
  }

  /** Ends the running section. */
  close(): void {
    const now = performance.now();
    const schedule = this.loop.read();
    const worker = this.worker?.read() ?? NOBODY;
    const others = this.others?.read() ?? NOBODY;
    const section = now - this.resumed;
    this.closedSchedule = schedule;
    this.closedWorker = worker;
    if (section > this.longest) {
      this.longest = section;
      this.longestAt = [this.resumed, now];
      this.longestSchedule = scheduleDelta(this.resumedSchedule, schedule);
      this.longestWorkerCpuMs = (worker.cpuNs - this.resumedWorker.cpuNs) / 1e6;
      this.longestOthersCpuMs = (others.cpuNs - this.resumedOthers.cpuNs) / 1e6;
    }
    this.onLoop += section;
  }

  /** The event loop's thread's schedule now (for the control's runs). */
  schedule(): Schedule {
    return this.loop.read();
  }

  /** Closes the threads' files. */
  release(): void {
    this.loop.close();
    this.worker?.close();
    this.background?.close();
    this.others?.close();
  }

  private resume(): void {
    this.resumed = performance.now();
    this.resumedSchedule = this.loop.read();
    this.resumedWorker = this.worker?.read() ?? NOBODY;
    this.resumedOthers = this.others?.read() ?? NOBODY;
    if (!this.closedSchedule) return;
    this.handoffWaitMs += scheduleDelta(this.closedSchedule, this.resumedSchedule).waitMs;
    this.handoffWorkerCpuMs += (this.resumedWorker.cpuNs - this.closedWorker.cpuNs) / 1e6;
  }
}
