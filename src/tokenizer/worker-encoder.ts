/**
 * A tokenizer on a worker thread, so encoding a long text never blocks the caller's event loop.
 * The worker holds the process open only while a request is pending.
 */
import type { Worker } from "node:worker_threads";
import { tsWorker } from "../core/ts-worker.ts";
import type { TokenizerName } from "./registry.ts";

interface Pending {
  resolve(ids: Uint32Array[]): void;
  reject(error: Error): void;
}

/** Encodes texts with the tokenizer `name` on its own thread (loaded there once, ≈ 1.5 s). */
export class WorkerEncoder {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | null = null;

  constructor(name: TokenizerName) {
    this.worker = tsWorker(new URL("./encode-worker.ts", import.meta.url), { name });
    this.worker.unref();
    this.worker.on("message", ({ id, ids }: { id: number; ids: Uint32Array[] }) => this.settle(id, ids));
    this.worker.on("error", (error) => this.fail(error));
    this.worker.on("exit", (code) => this.fail(new Error(`tokenizer worker exited with code ${code}`)));
  }

  /** Each text's ids, in order (as completions prompts when `prompt`); rejects if the worker died. */
  encode(texts: readonly string[], prompt = false): Promise<Uint32Array[]> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts, prompt });
    });
  }

  /** Stops the worker; pending requests reject. */
  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private settle(id: number, ids: Uint32Array[]): void {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    if (this.pending.size === 0) this.worker.unref();
    pending?.resolve(ids);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const pending of this.pending.values()) pending.reject(this.failure);
    this.pending.clear();
  }
}
