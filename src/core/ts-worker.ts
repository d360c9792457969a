/** Worker threads running a TypeScript entry: they do not inherit the tsx loader, so it is registered first. */
import { Worker } from "node:worker_threads";

/** A worker running the TypeScript module at `entry` with `workerData`. */
export function tsWorker(entry: URL, workerData: unknown): Worker {
  const tsx = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  const boot = `import { register } from ${tsx}; register(); await import(${JSON.stringify(entry.href)});`;
  return new Worker(boot, { eval: true, workerData });
}
