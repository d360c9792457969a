/** Test worker: posts back the CPUs it may run on. */
import { parentPort } from "node:worker_threads";
import { allowedCpus } from "../cpu-affinity.ts";

parentPort!.postMessage(allowedCpus());
