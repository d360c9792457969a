/**
 * CPU affinity of single threads of this process (Linux). A CPU-heavy worker thread woken by the
 * event loop tends to run on the loop's own CPU and preempt it; giving the worker a CPU of its own
 * and the loop the others keeps the two apart. Node has no call for a thread's affinity, so it is
 * set with util-linux's `taskset -p` on the thread's id; where that is not possible (no `taskset`,
 * not Linux, a single CPU) nothing changes.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";

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

/** Restricts the calling thread to `cpus`; false where it could not. Threads it starts later inherit them. */
export function pinCallingThread(cpus: readonly number[]): boolean {
  const tid = threadId();
  if (tid === undefined || cpus.length === 0) return false;
  try {
    execFileSync("taskset", ["-p", "-c", cpus.join(","), String(tid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** A worker's CPU apart from the event loop's: the last of `allowed`; undefined with fewer than two. */
export function splitCpus(allowed: readonly number[]): { loop: number[]; worker: number } | undefined {
  if (allowed.length < 2) return undefined;
  return { loop: allowed.slice(0, -1), worker: allowed[allowed.length - 1]! };
}

/** The CPU kept for workers once reserved (undefined: none could be); null before the first call. */
let reserved: number | undefined | null = null;

/**
 * Keeps one of the event loop's CPUs for workers: on the first call pins the calling thread (the
 * event loop's; call it from there) to the others, and returns the kept one, for a worker to pin
 * itself to; undefined (nothing changed) where the thread has a single CPU or affinity cannot be
 * set. Later calls (a restarted worker, a reloaded config) return the same CPU.
 */
export function reserveWorkerCpu(): number | undefined {
  if (reserved === null) {
    const split = splitCpus(allowedCpus());
    reserved = split && pinCallingThread(split.loop) ? split.worker : undefined;
  }
  return reserved;
}
