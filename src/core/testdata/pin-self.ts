/** Test worker: pins itself to `workerData` (CPUs) and posts back whether it could and its allowed CPUs. */
import { parentPort, workerData } from "node:worker_threads";
import { allowedCpus, pinCallingThread } from "../cpu-affinity.ts";

const pinned = pinCallingThread(workerData as number[]);
parentPort!.postMessage({ pinned, allowed: allowedCpus() });
