/**
 * The HTTP responses a server has open, counted from the request's arrival until the response
 * closes (sent, or the client went away), so a graceful drain can wait for them to finish.
 */
import type { ServerResponse } from "node:http";
import { SlotList } from "./slot-list.ts";

/** See the module comment. */
export class OpenResponses implements Iterable<ServerResponse> {
  private readonly open = new SlotList<ServerResponse>();
  private idle: (() => void) | undefined;

  /** Counts `res` until it closes (a response closes once, so `on` is `once` here). */
  track(res: ServerResponse): void {
    res.on("close", this.closed.bind(this, this.open.add(res)));
  }

  private closed(slot: number): void {
    this.open.remove(slot);
    if (this.open.size === 0) this.idle?.();
  }

  /** Responses open now. */
  get size(): number {
    return this.open.size;
  }

  [Symbol.iterator](): Iterator<ServerResponse> {
    return this.open.members()[Symbol.iterator]();
  }

  /** Resolves true once no response is open, false when `timeoutMs` passes first. */
  settle(timeoutMs: number): Promise<boolean> {
    if (this.open.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idle = undefined;
        resolve(false);
      }, timeoutMs);
      const idle = () => {
        clearTimeout(timer);
        this.idle = undefined;
        resolve(true);
      };
      this.idle = idle;
    });
  }
}
