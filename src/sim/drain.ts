/**
 * Graceful drain of `llmd sim`, as vLLM's drain shutdown mode does it: readiness (`/ready`,
 * `/health/ready`) turns 503 at once while liveness (`/health`) stays 200, new generation requests
 * get 503 `rejected-shutting-down` (a router takes that as "retry elsewhere"), and the requests
 * already running finish for up to the drain timeout. What still runs then ends with an explicit
 * `shutting_down` error (an SSE error event once a stream started, else a 503 body) and its
 * engine request is aborted.
 */
import type { ServerResponse } from "node:http";
import { LlmdError } from "../api/errors.ts";
import { OpenResponses } from "../core/open-responses.ts";
import { SlotList } from "../core/slot-list.ts";
import { sendError } from "./http.ts";

/** A running generation the drain can cut off. */
export interface Interruptible {
  /** Ends the response with `error` and aborts the engine request (no-op once finished). */
  interrupt(error: LlmdError): void;
}

/** The answer to a generation request that arrives while the simulator drains. */
export function simShuttingDown(): LlmdError {
  return new LlmdError("shutting_down", "the server is shutting down; retry on another replica");
}

/** See the module comment. One per simulator. */
export class SimDrain {
  private draining = false;
  private readonly open = new OpenResponses();
  private readonly running = new SlotList<Interruptible>();
  private drained: Promise<number> | undefined;

  /** True from the start of the drain on. */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Counts `res` as open until it closes. */
  track(res: ServerResponse): void {
    this.open.track(res);
  }

  /** A generation started (`interrupt` is what the drain timeout calls); returns its slot. */
  started(run: Interruptible): number {
    return this.running.add(run);
  }

  /** The generation in `slot` ended, on any path. */
  ended(slot: number): void {
    this.running.remove(slot);
  }

  /**
   * Drains (idempotent); resolves with how many requests were cut off at `timeoutMs` (0 when all
   * finished in time).
   */
  drain(timeoutMs: number): Promise<number> {
    this.drained ??= this.run(timeoutMs);
    return this.drained;
  }

  private async run(timeoutMs: number): Promise<number> {
    this.draining = true;
    if (await this.open.settle(timeoutMs)) return 0;
    const cutOff = this.open.size;
    const error = new LlmdError(
      "shutting_down",
      `the server shut down: its drain timeout (${timeoutMs} ms) passed`,
    );
    for (const run of this.running.members()) run.interrupt(error);
    for (const res of this.open) if (!res.headersSent) sendError(res, error);
    return cutOff;
  }
}
