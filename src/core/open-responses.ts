/**
 * The HTTP responses a server has open, counted from the request's arrival until the response
 * closes (sent, or the client went away), so a graceful drain can wait for them to finish.
 */
import type { ServerResponse } from "node:http";

/** See the module comment. */
export class OpenResponses implements Iterable<ServerResponse> {
  private readonly open = new Set<ServerResponse>();
  private idle: (() => void) | undefined;
  /**
   * One `close` listener for every response (a response closes once, so `on` is `once` here):
   * nothing is allocated per request, where `once` would wrap a fresh closure each time.
   */
  private readonly onClose: (this: ServerResponse) => void;

  constructor() {
    const owner = this;
    this.onClose = function (this: ServerResponse) {
      owner.open.delete(this);
      if (owner.open.size === 0) owner.idle?.();
    };
  }

  /** Counts `res` until it closes. */
  track(res: ServerResponse): void {
    this.open.add(res);
    res.on("close", this.onClose);
  }

  /** Responses open now. */
  get size(): number {
    return this.open.size;
  }

  [Symbol.iterator](): Iterator<ServerResponse> {
    return this.open.values();
  }

  /** Resolves true once no response is open, false when `timeoutMs` passes first. */
  settle(timeoutMs: number): Promise<boolean> {
    if (this.open.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.idle = undefined;
        resolve(false);
      }, timeoutMs);
      this.idle = () => {
        clearTimeout(timer);
        this.idle = undefined;
        resolve(true);
      };
    });
  }
}
