/**
 * One measured window of the load generator (benchmarks/router/load.ts, a forked process) against
 * a target, with the target's CPU times read when the generator's measuring starts and when its
 * result arrives: what both `npm run bench -- router` and `router-syscalls` measure.
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { LoadJob, LoadResult } from "./load.ts";
import { cpuTimes, type Target } from "./targets.ts";

const LOAD_WORKER = fileURLToPath(new URL("./load.ts", import.meta.url));

/** A window's load result and the target's CPU seconds (user, system) over it. */
export interface LoadWindow {
  result: LoadResult;
  cpu: { user: number; system: number };
}

/**
 * Runs `job` against `target`; `onMeasuring` runs when the measured part starts (its result, if
 * any, is awaited after the window ends); `onFork` gets the generator's pid as soon as it exists.
 */
export async function loadWindow(
  target: Target,
  job: LoadJob,
  hooks: { onFork?(pid: number | undefined): void; onMeasuring?(): (() => Promise<void>) | undefined } = {},
): Promise<LoadWindow> {
  const worker = fork(LOAD_WORKER, [], { execArgv: ["--import", "tsx"], stdio: "inherit" });
  hooks.onFork?.(worker.pid);
  let atStart = { user: Number.NaN, system: Number.NaN };
  let stop: (() => Promise<void>) | undefined;
  const result = new Promise<LoadResult>((resolve, reject) => {
    worker.on("message", (msg: { measuring?: boolean } | LoadResult) => {
      if (!("measuring" in msg)) return resolve(msg as LoadResult);
      atStart = cpuTimes(target.pid);
      stop = hooks.onMeasuring?.();
    });
    worker.once("exit", (code) => reject(new Error(`load generator exited with ${code}`)));
  });
  worker.send(job);
  const r = await result;
  const atEnd = cpuTimes(target.pid);
  await stop?.();
  await once(worker, "exit").catch(() => {});
  return { result: r, cpu: { user: atEnd.user - atStart.user, system: atEnd.system - atStart.system } };
}
