/**
 * What the Linux scheduler says a thread did over a stretch of wall time, from
 * `/proc/<thread>/schedstat` (ns on a CPU, ns waiting on a runqueue, timeslices) and
 * `/proc/<thread>/status` (involuntary context switches): it tells a block that was long because
 * of our work (on-CPU) from one that was long because the thread was not running (runqueue wait:
 * preempted by another thread or process; the rest, wall less both: the hypervisor's steal, which
 * this kernel leaves out of on-CPU time, or a sleep in the kernel).
 *
 * The kernel brings a running thread's on-CPU time up to date only at scheduler ticks (4 ms at
 * HZ=250), so the calling thread's on-CPU time is read after `process.cpuUsage()`: getrusage of
 * the whole process makes the kernel account the caller's pending run time first, which turns it
 * precise to a few microseconds. Its runqueue wait is taken from a read before that call: a thread
 * another one is due to preempt loses its core on the way out of its next system call (a wakeup's
 * preemption is lazy), and a wait that starts on the way out of the reading's own calls belongs
 * after the reading. So a stretch is timed as `now`, then `read`, both at its start and at its end:
 * its wall time holds the start's read (≈ 8 µs) and every wait the readings count. The status
 * file's read costs ≈ 15 µs.
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

  /** The counters now (the calling thread's on-CPU time made current first, its wait read before that). */
  read(): Schedule {
    const before = this.fields();
    if (this.tid !== undefined) return before;
    process.cpuUsage();
    return { ...this.fields(), waitNs: before.waitNs, slices: before.slices };
  }

  private fields(): Schedule {
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

/**
 * The calling thread's involuntary context switches so far (`nonvoluntary_ctxt_switches`), its
 * file open for the process's life.
 */
export class InvoluntarySwitches {
  private readonly fd = openSync("/proc/thread-self/status", "r");

  read(): number {
    const match = /nonvoluntary_ctxt_switches:\s*(\d+)/.exec(readText(this.fd));
    return Number(match?.[1] ?? 0);
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

/**
 * Resolves once `threads` have not been on a CPU for `quietMs` in a row (polled every
 * millisecond), or after `maxMs`: the background work a forced collection leaves (V8's
 * concurrent sweeping on its platform threads) is done before a timed run starts. Another
 * thread's on-CPU time moves only at the kernel's ticks while it runs (4 ms at HZ=250), so the
 * quiet window is longer than a tick.
 */
export async function untilQuiet(threads: ThreadGroupSchedule, quietMs = 6, maxMs = 200): Promise<void> {
  const deadline = performance.now() + maxMs;
  let last = threads.read().cpuNs;
  let quietSince = performance.now();
  while (performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    const now = threads.read().cpuNs;
    if (now !== last) quietSince = performance.now();
    else if (performance.now() - quietSince >= quietMs) return;
    last = now;
  }
}

function readText(fd: number): string {
  const n = readSync(fd, scratch, 0, scratch.length, 0);
  return scratch.toString("latin1", 0, n);
}
