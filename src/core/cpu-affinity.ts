/**
 * CPU affinity of single threads of this process (Linux). On few cores the process's own threads
 * (a CPU-heavy worker the event loop wakes, V8's collector threads) often run on the event loop's
 * CPU and preempt it; giving the loop a CPU of its own and every other thread the rest keeps them
 * apart. Node has no call for a thread's affinity, so it is set with util-linux's `taskset -p` on
 * the thread's id; where that is not possible (no `taskset`, not Linux, a single CPU) nothing
 * changes.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";
import { stat } from "node:fs/promises";

/** The CPUs of a kernel CPU list such as "0-3,5,7-8", ascending. */
export function parseCpuList(list: string): number[] {
  const cpus = new Set<number>();
  for (const part of list.trim().split(",")) {
    if (part === "") continue;
    const [from, to = from] = part.split("-").map(Number);
    if (!Number.isInteger(from) || !Number.isInteger(to)) throw new Error(`bad CPU list "${list}"`);
    for (let cpu = from!; cpu <= to!; cpu++) cpus.add(cpu);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** The CPUs thread `tid` of this process (default: the calling thread) may run on; [] where unknown. */
export function allowedCpus(tid?: number): number[] {
  const path = tid === undefined ? "/proc/thread-self/status" : `/proc/self/task/${tid}/status`;
  try {
    const list = /^Cpus_allowed_list:\s*(\S+)/m.exec(readFileSync(path, "utf8"))?.[1];
    return list ? parseCpuList(list) : [];
  } catch {
    return [];
  }
}

/** The calling thread's kernel thread id; undefined where /proc has none. */
export function threadId(): number | undefined {
  try {
    return Number(readlinkSync("/proc/thread-self").split("/").pop());
  } catch {
    return undefined;
  }
}

/**
 * Restricts task `id` to `cpus` (with `all`: every thread of process `id`); false where it could
 * not. Threads a task starts later inherit its CPUs.
 */
function pin(id: number, cpus: readonly number[], all = false): boolean {
  const args = [...(all ? ["-a"] : []), "-p", "-c", cpus.join(","), String(id)];
  try {
    execFileSync("taskset", args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** The CPUs of the event loop's thread and of the process's other threads. */
export interface CpuSplit {
  loop: number[];
  others: number[];
}

/** The event loop's CPU (the first of `allowed`) and the others'; undefined with fewer than two. */
export function splitCpus(allowed: readonly number[]): CpuSplit | undefined {
  if (allowed.length < 2) return undefined;
  return { loop: allowed.slice(0, 1), others: allowed.slice(1) };
}

/** The split once made (undefined: none could be); null before the first call. */
let reservation: Promise<CpuSplit | undefined> | null = null;

/**
 * Gives the calling thread (the event loop's; call it from there) a CPU of its own: on the first
 * call pins it to the first of its CPUs and every other thread of the process (V8's, libuv's
 * pool, started first so that its threads exist) to the rest, and returns the split; a worker
 * started later pins itself to `others`. Undefined (nothing changed) where the thread has a
 * single CPU or affinity cannot be set. Later calls (a restarted worker, a reloaded config) return
 * the same split. `tsWorker(…, others)` starts such a worker.
 */
export function reserveLoopCpu(): Promise<CpuSplit | undefined> {
  reservation ??= (async () => {
    const allowed = allowedCpus();
    const split = splitCpus(allowed);
    const self = threadId();
    if (!split || self === undefined) return undefined;
    await stat(process.cwd()); // starts libuv's pool, whose threads would else inherit the loop's CPU
    if (!pin(process.pid, split.others, true)) return undefined;
    if (pin(self, split.loop)) return split;
    pin(process.pid, allowed, true); // undo: nothing changed
    return undefined;
  })();
  return reservation;
}
