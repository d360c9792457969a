/**
 * One GET as an undici dispatch handler that collects the body chunks into one buffer and decodes
 * it once. Scrapes run 20 times a second per endpoint, and this skips what `request()` builds per
 * response (a Readable body stream, an async resource, promise chains): about half the CPU per
 * scrape (docs/endpoints.md "Measured", `npm run bench -- endpoints`).
 */
import type { Dispatcher } from "undici";

/** Outcome of one GET: the body on 2xx, otherwise why not (a value, not an exception). */
export type FetchOutcome = { ok: true; body: string } | { ok: false; status: number; error: string };

/** GETs `path` from `origin` through `dispatcher`, the whole request bounded by `timeoutMs`; never rejects. */
export function getText(
  dispatcher: Dispatcher,
  origin: string,
  path: string,
  timeoutMs: number,
): Promise<FetchOutcome> {
  return new Promise((resolve) => {
    const handler = new TextGet(resolve, timeoutMs);
    try {
      dispatcher.dispatch({ origin, path, method: "GET" }, handler);
    } catch (err) {
      handler.onResponseError(undefined, err as Error);
    }
  });
}

class TextGet implements Dispatcher.DispatchHandler {
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | undefined;
  private expired = false;
  private status = 0;
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly settle: (outcome: FetchOutcome) => void,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(() => this.expire(), timeoutMs);
  }

  /** The deadline passed: aborts now, or as soon as the request has a connection. */
  private expire(): void {
    this.expired = true;
    this.controller?.abort(timeoutError());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.expired) controller.abort(timeoutError());
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    clearTimeout(this.timer);
    const { status, chunks } = this;
    if (status >= 200 && status < 300) {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      this.settle({ ok: true, body: body.toString("utf8") });
    } else this.settle({ ok: false, status, error: `HTTP ${status}` });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
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
