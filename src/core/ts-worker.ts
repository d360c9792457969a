/** Worker threads running a TypeScript entry: they do not inherit the tsx loader, so it is registered first. */
import { Worker } from "node:worker_threads";

/**
 * A worker running the TypeScript module at `entry` with `workerData`. Given `cpus`, the worker
 * pins itself to them before anything else (with `taskset`, as cpu-affinity.ts does, but in plain
 * JavaScript: the loader is not registered yet), so the threads it starts (the loader's among
 * them) inherit them.
 */
export function tsWorker(entry: URL, workerData: unknown, cpus?: readonly number[]): Worker {
  const tsx = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  const pin = cpus?.length
    ? `import { execFileSync } from "node:child_process"; import { readlinkSync } from "node:fs";
       try { execFileSync("taskset", ["-p", "-c", ${JSON.stringify(cpus.join(","))},
         readlinkSync("/proc/thread-self").split("/").pop()], { stdio: "ignore" }); } catch {}\n`
    : "";
  const boot = `${pin}import { register } from ${tsx}; register(); await import(${JSON.stringify(entry.href)});`;
  return new Worker(boot, { eval: true, workerData });
}
