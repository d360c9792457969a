/**
 * The event loop's thread's schedule over a case's turns, tallied: for each turn's longest block
 * and each control run, time on a CPU and time runnable but waiting (thread-schedule.ts), and
 * whether the tokenizer's worker was on a CPU while the event loop waited (its own worker taking
 * the core, not another process).
 */
import type { ScheduleDelta } from "./thread-schedule.ts";

type Spread = { min: number; p50: number; p99: number; max: number };

/** A wait this short is the scheduler's bookkeeping, not a lost core. */
const WAITED_MS = 0.01;
/** The event-loop ceiling the target names. */
const CEILING_MS = 1;

/**
 * What the scheduler says of the event loop's thread: during each turn's longest block and each
 * control run, its time on a CPU and runnable but waiting (the rest of the wall time: the
 * hypervisor's steal or a sleep in the kernel), and the worker's threads' time on a CPU meanwhile.
 */
export interface ScheduleRow {
  blockCpuMs: Spread;
  blockWaitMs: Spread;
  /** The event loop's runqueue wait between a handoff to the worker and its reply, per turn. */
  handoffWaitMs: Spread;
  /** The control's wall time with the readings around it, so it compares with the wait they count. */
  controlWallMs: Spread;
  controlCpuMs: Spread;
  controlWaitMs: Spread;
  /** Involuntary context switches of the event loop's thread per turn. */
  involuntary: Spread;
  /** Blocks over 1 ms of wall time, those of them over 1 ms on a CPU, their wall and wait ms together. */
  over: { blocks: number; onCpu: number; wallMs: number; waitMs: number };
  /** Blocks that waited on a runqueue, those during which the worker ran, and their waits in ms. */
  waited: {
    blocks: number;
    waitMs: number;
    withWorker: number;
    withWorkerWaitMs: number;
    /** With `--threads`: of them, those during which another thread of the process (V8's) ran, and its on-CPU ms. */
    withOthers: number;
    othersCpuMs: number;
  };
  /** Handoffs after which the loop waited, their waits and the worker's on-CPU ms meanwhile. */
  handoffs: { waited: number; waitMs: number; workerCpuMs: number };
}

/** What a turn's readings are (tokenize-turn.ts's `Decision`). */
export interface TurnSchedule {
  blockMs: number;
  schedule: ScheduleDelta;
  workerCpuMs: number;
  othersCpuMs: number;
  involuntary: number;
  handoffWaitMs: number;
  handoffWorkerCpuMs: number;
}

/** Collects a case's readings; `row` summarises them. */
export class ScheduleTally {
  private readonly blockCpu: number[] = [];
  private readonly blockWait: number[] = [];
  private readonly handoffWait: number[] = [];
  private readonly controlWall: number[] = [];
  private readonly controlCpu: number[] = [];
  private readonly controlWait: number[] = [];
  private readonly switches: number[] = [];
  private readonly over = { blocks: 0, onCpu: 0, wallMs: 0, waitMs: 0 };
  private readonly waited = {
    blocks: 0,
    waitMs: 0,
    withWorker: 0,
    withWorkerWaitMs: 0,
    withOthers: 0,
    othersCpuMs: 0,
  };
  private readonly handoffs = { waited: 0, waitMs: 0, workerCpuMs: 0 };

  /** One turn: its longest block's wall ms and schedule, the worker's on-CPU ms meanwhile, the turn's switches and handoff wait. */
  turn(one: TurnSchedule): void {
    const { blockMs, schedule: block, workerCpuMs } = one;
    this.blockCpu.push(block.cpuMs);
    this.blockWait.push(block.waitMs);
    this.handoffWait.push(one.handoffWaitMs);
    if (one.handoffWaitMs >= WAITED_MS) {
      this.handoffs.waited++;
      this.handoffs.waitMs += one.handoffWaitMs;
      this.handoffs.workerCpuMs += one.handoffWorkerCpuMs;
    }
    this.switches.push(one.involuntary);
    if (blockMs > CEILING_MS) {
      this.over.blocks++;
      if (block.cpuMs > CEILING_MS) this.over.onCpu++;
      this.over.wallMs += blockMs;
      this.over.waitMs += block.waitMs;
    }
    if (block.waitMs < WAITED_MS) return;
    this.waited.blocks++;
    this.waited.waitMs += block.waitMs;
    if (one.othersCpuMs > 0) {
      this.waited.withOthers++;
      this.waited.othersCpuMs += one.othersCpuMs;
    }
    if (workerCpuMs <= 0) return;
    this.waited.withWorker++;
    this.waited.withWorkerWaitMs += block.waitMs;
  }

  /** One control run: its wall ms and schedule. */
  control(wallMs: number, run: ScheduleDelta): void {
    this.controlWall.push(wallMs);
    this.controlCpu.push(run.cpuMs);
    this.controlWait.push(run.waitMs);
  }

  row(summary: (values: number[]) => Spread): ScheduleRow {
    return {
      blockCpuMs: summary(this.blockCpu),
      blockWaitMs: summary(this.blockWait),
      handoffWaitMs: summary(this.handoffWait),
      controlWallMs: summary(this.controlWall),
      controlCpuMs: summary(this.controlCpu),
      controlWaitMs: summary(this.controlWait),
      involuntary: summary(this.switches),
      over: { ...this.over },
      waited: { ...this.waited },
      handoffs: { ...this.handoffs },
    };
  }
}
