/**
 * Graceful drain of the gateway, as llm-d's EPP does it on SIGTERM: readiness turns 503 at once,
 * new inference requests get 503 `rejected-shutting-down` (flow control answers its queued
 * requests the same way), and the requests already accepted, streams included, run to their end
 * for up to the drain timeout. What still runs then is answered with an explicit `shutting_down`
 * error: forwarding requests through the {@link GatewayDrain.deadline} (an error body, or an SSE
 * error event once a stream started), any other open request with a 503 body.
 */
import { setMaxListeners } from "node:events";
import type { ServerResponse } from "node:http";
import { LlmdError } from "../api/errors.ts";
import { OpenResponses } from "../core/open-responses.ts";
import { type Interrupt, interruptOf } from "./interrupt.ts";
import { sendError } from "./respond.ts";

/** The answer to a request that arrives while the gateway drains. */
export function shuttingDown(): LlmdError {
  return new LlmdError("shutting_down", "the router is shutting down; retry on another replica");
}

/** How a drain ended. */
export interface DrainOutcome {
  /** Requests still open at the timeout, answered `shutting_down` (0 when all finished in time). */
  cutOff: number;
}

function unlimited(signal: AbortSignal): AbortSignal {
  setMaxListeners(0, signal);
  return signal;
}

/** See the module comment. One per gateway; `drain` runs at most once. */
export class GatewayDrain {
  private draining = false;
  private readonly open = new OpenResponses();
  private readonly controller = new AbortController();
  private drained: Promise<DrainOutcome> | undefined;

  /**
   * Aborted at the drain timeout, with a `shutting_down` `LlmdError` as its reason, for what takes
   * an AbortSignal (the P/D legs); it has no listener limit.
   */
  readonly signal: AbortSignal = unlimited(this.controller.signal);
  /** The same moment and reason for the forwarding requests, which watch it by slot. */
  readonly deadline: Interrupt = interruptOf(this.signal);

  /** True from the start of the drain on. */
  get isDraining(): boolean {
    return this.draining;
  }

  /** HTTP requests whose response has not closed yet. */
  get inFlight(): number {
    return this.open.size;
  }

  /** Counts `res` as in flight until it closes. */
  track(res: ServerResponse): void {
    this.open.track(res);
  }

  /**
   * Starts draining (idempotent: a second call returns the first drain). `stopAdmitting` runs at
   * once (flow control answers its queue); the promise resolves when every open request closed, or
   * at `timeoutMs` after the stragglers were answered.
   */
  drain(timeoutMs: number, stopAdmitting: () => void): Promise<DrainOutcome> {
    this.drained ??= this.run(timeoutMs, stopAdmitting);
    return this.drained;
  }

  private async run(timeoutMs: number, stopAdmitting: () => void): Promise<DrainOutcome> {
    this.draining = true;
    stopAdmitting();
    if (await this.open.settle(timeoutMs)) return { cutOff: 0 };
    const cutOff = this.open.size;
    const reason = new LlmdError(
      "shutting_down",
      `the router shut down: its drain timeout (${timeoutMs} ms) passed`,
    );
    this.controller.abort(reason);
    // Forwarding requests answer from the abort within a turn of the event loop; what is left
    // (a body still uploading, a handler between stages) is answered here.
    await new Promise((resolve) => setImmediate(resolve));
    for (const res of this.open) {
      if (!res.headersSent) sendError(res, reason, { connection: "close" });
    }
    return { cutOff };
  }
}
