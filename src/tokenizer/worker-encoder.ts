/**
 * A tokenizer on a worker thread, so encoding a long text never blocks the caller's event loop.
 * With a chat turn's ids the worker can also build the conversation's new ids array (a fork's, an
 * outgrown one's, a new conversation's: `buildIds`), so neither the copy of the shared prefix nor
 * the new array's page faults land on the event loop. The worker holds the process open only while
 * a request is pending. Given CPUs, the worker runs only there (`reserveLoopCpu` keeps the event
 * loop on a CPU of its own).
 */
import type { Worker } from "node:worker_threads";
import { tsWorker } from "../core/ts-worker.ts";
import { type BuiltIds, idsLength } from "./conversation-ids.ts";
import type { TokenizerName } from "./registry.ts";

/**
 * A conversation array the worker builds with the texts' ids: `prefix` ids of `source` (a
 * `ConversationIds` buffer), then the ids, with room for `room` more; only when those do not fit
 * in `fits` ids (0: always).
 */
export interface BuildRequest {
  readonly source: SharedArrayBuffer;
  readonly prefix: number;
  readonly fits: number;
  readonly room: number;
}

/** Each text's ids, and the array built with them (the ids are views of it), if one was. */
export interface Encoded {
  readonly ids: Uint32Array[];
  readonly built: BuiltIds | null;
}

/** The worker's request and reply (encode-worker.ts). */
export interface EncodeMessage {
  id: number;
  texts: readonly string[];
  prompt: boolean;
  build: BuildRequest | null;
}
export interface EncodedMessage extends Encoded {
  readonly id: number;
}

/** True when `build` asks for an array for `ids`: they (and its room) do not fit where they would go. */
export function mustBuild(build: BuildRequest, ids: readonly Uint32Array[]): boolean {
  return build.prefix + idsLength(ids) + build.room > build.fits;
}

interface Pending {
  resolve(encoded: Encoded): void;
  reject(error: Error): void;
}

/** Encodes texts with the tokenizer `name` on its own thread (loaded there once, ≈ 1.5 s). */
export class WorkerEncoder {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | null = null;

  /** `cpus`: the CPUs the worker runs on (see `reserveLoopCpu`). */
  constructor(name: TokenizerName, cpus?: readonly number[]) {
    this.worker = tsWorker(new URL("./encode-worker.ts", import.meta.url), { name }, cpus);
    this.worker.unref();
    this.worker.on("message", (reply: EncodedMessage) => this.settle(reply));
    this.worker.on("error", (error) => this.fail(error));
    this.worker.on("exit", (code) => this.fail(new Error(`tokenizer worker exited with code ${code}`)));
  }

  /**
   * Each text's ids, in order (as completions prompts when `prompt`), and the array `build` asks
   * for when it must be built; rejects if the worker died.
   */
  encode(texts: readonly string[], prompt = false, build: BuildRequest | null = null): Promise<Encoded> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    if (this.pending.size === 0) this.worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts, prompt, build } satisfies EncodeMessage);
    });
  }

  /** Stops the worker; pending requests reject. */
  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private settle(reply: EncodedMessage): void {
    const pending = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    pending?.resolve(reply);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const pending of this.pending.values()) pending.reject(this.failure);
    this.pending.clear();
  }
}
