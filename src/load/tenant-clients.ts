/**
 * `llmd bench --client-per-tenant`: one client thread per tenant (objective), as when tenants are
 * separate programs. A single client thread that builds a burst of 50 long agent prompts, or reads
 * thousands of agent tokens a second, reads a chat reply's first token late: at 2× load on the
 * 2-core machine that client-side delay, not the server, was most of chat's p99 TTFT. Each thread
 * replays the same scenario but sends only its tenant's requests (the tenant mix plans each
 * tenant from its own random stream, so the union is the single-client run); all threads share
 * one time origin, and the records come back merged in arrival order. Tenants share no prompt
 * content, so each thread's ideal ceiling equals the single client's.
 */
import type { Worker } from "node:worker_threads";
import { tsWorker } from "../core/ts-worker.ts";
import type { RequestRecord } from "../measure/records.ts";

/** What every client thread needs to replay its share of a scenario. */
export interface TenantClientOptions {
  scenarioFile: string;
  overrides: readonly string[];
  url: string;
  timeScale: number;
  blockTokens: number;
  /** The objectives to split by; requests naming none of them go to the first one's thread. */
  tenants: readonly string[];
  onProgress?(elapsedMs: number, inFlight: number): void;
}

/** Input of one client thread (`tenant-client-worker.ts`). */
export interface TenantClientJob extends Omit<TenantClientOptions, "onProgress"> {
  tenant: string;
}

/** Messages a client thread posts. */
export type TenantClientMessage =
  | { kind: "ready" }
  | { kind: "progress"; elapsedMs: number; inFlight: number }
  | { kind: "done"; records: RequestRecord[] };

/** Message the parent posts once every thread is ready: workload time 0, as epoch ms. */
export interface StartMessage {
  epochMs: number;
}

/** Delay between "all ready" and workload time 0, so every thread starts on the same clock. */
const START_DELAY_MS = 50;

/** Runs one client thread per tenant and returns every record, by arrival time. */
export async function runTenantClients(o: TenantClientOptions): Promise<RequestRecord[]> {
  const { onProgress, ...shared } = o;
  const threads = o.tenants.map((tenant) => startThread({ ...shared, tenant }));
  try {
    await Promise.all(threads.map((t) => t.ready));
    const epochMs = performance.timeOrigin + performance.now() + START_DELAY_MS;
    const progress = threads.map(() => ({ elapsedMs: 0, inFlight: 0 }));
    threads.forEach((t, i) => {
      t.onProgress = (elapsedMs, inFlight) => {
        progress[i] = { elapsedMs, inFlight };
        onProgress?.(
          Math.max(...progress.map((p) => p.elapsedMs)),
          progress.reduce((sum, p) => sum + p.inFlight, 0),
        );
      };
      t.worker.postMessage({ epochMs } satisfies StartMessage);
    });
    const records = (await Promise.all(threads.map((t) => t.done))).flat();
    return records.sort((a, b) => a.arrivalMs - b.arrivalMs);
  } finally {
    // A failed thread fails the run; the others must not keep the process alive.
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }
}

interface Thread {
  worker: Worker;
  ready: Promise<void>;
  done: Promise<RequestRecord[]>;
  onProgress?(elapsedMs: number, inFlight: number): void;
}

function startThread(job: TenantClientJob): Thread {
  const worker = tsWorker(new URL("./tenant-client-worker.ts", import.meta.url), job);
  const thread = { worker } as Thread;
  let markReady: () => void = () => {};
  thread.ready = new Promise((resolve) => {
    markReady = resolve;
  });
  thread.done = new Promise((resolve, reject) => {
    worker.on("error", reject);
    worker.on("exit", (code) => reject(new Error(`client thread for ${job.tenant} exited with ${code}`)));
    worker.on("message", (m: TenantClientMessage) => {
      if (m.kind === "ready") markReady();
      else if (m.kind === "progress") thread.onProgress?.(m.elapsedMs, m.inFlight);
      else resolve(m.records);
    });
  });
  // A thread that fails before it is ready must fail the run, not hang it.
  thread.ready = Promise.race([thread.ready, thread.done.then(() => {})]);
  return thread;
}
