/**
 * One GET as a dispatch handler that collects the body chunks into one buffer and decodes it
 * once, through the router's HTTP/1.1 client (src/http1, plain http) or an undici dispatcher
 * (https): the handler contract is the same. Scrapes run 20 times a second per endpoint, and this
 * skips what undici's `request()` builds per response (a Readable body stream, an async resource,
 * promise chains) (docs/endpoints.md "Measured", `npm run bench -- endpoints`).
 */
import type { Dispatcher } from "undici";
import { Http1Pool } from "../http1/pool.ts";

/** Outcome of one GET: the body on 2xx, otherwise why not (a value, not an exception). */
export type FetchOutcome = { ok: true; body: string } | { ok: false; status: number; error: string };

/** What the handler needs of either client's controller. */
interface Abortable {
  abort(reason: Error): void;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * GETs `path` from `origin` through `client`, the whole request bounded by `timeoutMs` and the
 * body by `maxBodyBytes`; never rejects.
 */
export function getText(
  client: Http1Pool | Dispatcher,
  origin: string,
  path: string,
  timeoutMs: number,
  maxBodyBytes: number,
): Promise<FetchOutcome> {
  return new Promise((resolve) => {
    const handler = new TextGet(resolve, timeoutMs, maxBodyBytes);
    try {
      if (client instanceof Http1Pool) client.dispatch({ path, method: "GET", headers: NO_HEADERS }, handler);
      else client.dispatch({ origin, path, method: "GET" }, handler);
    } catch (err) {
      handler.onResponseError(undefined, err as Error);
    }
  });
}

class TextGet {
  private readonly timer: NodeJS.Timeout;
  private controller: Abortable | undefined;
  private expired = false;
  private status = 0;
  private bytes = 0;
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly settle: (outcome: FetchOutcome) => void,
    timeoutMs: number,
    private readonly maxBodyBytes: number,
  ) {
    this.timer = setTimeout(() => this.expire(), timeoutMs);
  }

  /** The deadline passed: aborts now, or as soon as the request has a connection. */
  private expire(): void {
    this.expired = true;
    this.controller?.abort(timeoutError());
  }

  onRequestStart(controller: Abortable): void {
    this.controller = controller;
    if (this.expired) controller.abort(timeoutError());
  }

  onResponseStart(_controller: Abortable, statusCode: number): void {
    this.status = statusCode;
  }

  onResponseData(controller: Abortable, chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBodyBytes)
      controller.abort(new Error(`response body over ${this.maxBodyBytes} bytes`));
    else this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    clearTimeout(this.timer);
    const { status, chunks } = this;
    if (status >= 200 && status < 300) {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      this.settle({ ok: true, body: body.toString("utf8") });
    } else this.settle({ ok: false, status, error: `HTTP ${status}` });
  }

  onResponseError(_controller: Abortable | undefined, err: Error): void {
    clearTimeout(this.timer);
    this.settle({ ok: false, status: 0, error: describe(err) });
  }
}

function timeoutError(): DOMException {
  return new DOMException("The operation was aborted due to timeout", "TimeoutError");
}

function describe(err: Error): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? `${code}: ${err.message}` : err.message;
}
