/**
 * What the Linux scheduler says a thread did over a stretch of wall time, from
 * `/proc/<thread>/schedstat` (ns on a CPU, ns waiting on a runqueue, timeslices) and
 * `/proc/<thread>/status` (involuntary context switches): it tells a block that was long because
 * of our work (on-CPU) from one that was long because the thread was not running (runqueue wait:
 * preempted by another thread or process; the rest, wall less both: the hypervisor's steal, which
 * this kernel leaves out of on-CPU time, or a sleep in the kernel).
 *
 * The kernel brings a running thread's on-CPU time up to date only at scheduler ticks (4 ms at
 * HZ=250), so a read of the calling thread is preceded by `process.cpuUsage()`: getrusage of the
 * whole process makes the kernel account the caller's pending run time first, which turns the
 * reading precise to about a microsecond. A read costs ≈ 4 µs; the status file's ≈ 15 µs.
 */
import { closeSync, openSync, readdirSync, readSync } from "node:fs";

/** One reading: cumulative ns on a CPU and ns runnable but waiting, and timeslices run. */
export interface Schedule {
  cpuNs: number;
  waitNs: number;
  slices: number;
}

/** What changed between two readings, in ms (slices as a count). */
export interface ScheduleDelta {
  cpuMs: number;
  waitMs: number;
  slices: number;
}

const scratch = Buffer.alloc(4096);

/** One thread's schedstat, read through a file kept open (a read at offset 0 re-renders it). */
export class ThreadSchedule {
  private readonly fd: number;

  /** The calling thread's, or thread `tid` of this process. */
  constructor(private readonly tid?: number) {
    this.fd = openSync(
      tid === undefined ? "/proc/thread-self/schedstat" : `/proc/self/task/${tid}/schedstat`,
      "r",
    );
  }

  /** The counters now (the calling thread's made current first). */
  read(): Schedule {
    if (this.tid === undefined) process.cpuUsage();
    const fields = readText(this.fd).split(" ");
    return { cpuNs: Number(fields[0]), waitNs: Number(fields[1]), slices: Number(fields[2]) };
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** `to` less `from`, in ms. */
export function scheduleDelta(from: Schedule, to: Schedule): ScheduleDelta {
  return {
    cpuMs: (to.cpuNs - from.cpuNs) / 1e6,
    waitMs: (to.waitNs - from.waitNs) / 1e6,
    slices: to.slices - from.slices,
  };
}

/** The calling thread's involuntary context switches so far (`nonvoluntary_ctxt_switches`). */
export class InvoluntarySwitches {
  private readonly fd = openSync("/proc/thread-self/status", "r");

  read(): number {
    const match = /nonvoluntary_ctxt_switches:\s*(\d+)/.exec(readText(this.fd));
    return Number(match?.[1] ?? 0);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The ids of this process's threads now. */
export function threadIds(): number[] {
  return readdirSync("/proc/self/task").map(Number);
}

/** The summed schedstat of threads `tids` (the tokenizer's worker and whatever it started). */
export class ThreadGroupSchedule {
  private readonly threads: ThreadSchedule[];

  constructor(tids: readonly number[]) {
    this.threads = tids.map((tid) => new ThreadSchedule(tid));
  }

  read(): Schedule {
    const sum: Schedule = { cpuNs: 0, waitNs: 0, slices: 0 };
    for (const thread of this.threads) {
      const one = thread.read();
      sum.cpuNs += one.cpuNs;
      sum.waitNs += one.waitNs;
      sum.slices += one.slices;
    }
    return sum;
  }

  close(): void {
    for (const thread of this.threads) thread.close();
  }
}

function readText(fd: number): string {
  const n = readSync(fd, scratch, 0, scratch.length, 0);
  return scratch.toString("latin1", 0, n);
}
