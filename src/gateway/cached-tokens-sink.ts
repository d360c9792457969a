/**
 * The client side of a P/D decode leg: passes the decode server's answer through and sets its
 * usage's `cached_tokens` to the prefill's (llm-d's sidecar does the same), in a JSON body or in
 * the stream's usage event. Error answers pass through unchanged.
 */
import type { OutgoingHttpHeaders } from "node:http";
import type { LlmdError } from "../api/errors.ts";
import { rewriteJsonBody, SseUsageRewriter } from "../disagg/usage-rewrite.ts";
import { endStreamWithError } from "./respond.ts";
import type { ClientSink } from "./types.ts";

/** See the module comment. */
export class CachedTokensSink implements ClientSink {
  /** A JSON answer's status and headers, written with its rewritten body (a new length). */
  private held: { status: number; headers: OutgoingHttpHeaders } | undefined;
  private stream: SseUsageRewriter | undefined;

  constructor(
    private readonly inner: ClientSink,
    private readonly cachedTokens: number,
  ) {}

  get destroyed(): boolean {
    return this.inner.destroyed;
  }
  get writableFinished(): boolean {
    return this.inner.writableFinished;
  }
  get writableEnded(): boolean {
    return this.inner.writableEnded;
  }
  get headersSent(): boolean {
    return this.held !== undefined || this.inner.headersSent;
  }

  writeHead(status: number, headers: OutgoingHttpHeaders): this {
    if (String(headers["content-type"] ?? "").startsWith("text/event-stream")) {
      this.stream = new SseUsageRewriter(this.cachedTokens);
      this.inner.writeHead(status, headers);
    } else if (status >= 200 && status < 300) this.held = { status, headers };
    else this.inner.writeHead(status, headers);
    return this;
  }

  flushHeaders(): void {
    if (!this.held) this.inner.flushHeaders();
  }

  write(chunk: Buffer | string): boolean {
    if (!this.stream) return this.inner.write(chunk);
    const out = this.stream.push(Buffer.from(chunk));
    return out.length === 0 || this.inner.write(out);
  }

  end(chunk?: Buffer | string): this {
    if (this.held) this.endHeld(chunk);
    else if (this.stream) {
      const last =
        chunk === undefined
          ? this.stream.end()
          : Buffer.concat([this.stream.push(Buffer.from(chunk)), this.stream.end()]);
      this.inner.end(last);
    } else this.inner.end(chunk);
    return this;
  }

  once(event: "close" | "drain", listener: () => void): this {
    this.inner.once(event, listener);
    return this;
  }

  off(event: "close" | "drain", listener: () => void): this {
    this.inner.off(event, listener);
    return this;
  }

  endWithError(error: LlmdError): void {
    if (this.stream) {
      const rest = this.stream.end();
      if (rest.length > 0) this.inner.write(rest);
    }
    endStreamWithError(this.inner, error);
  }

  private endHeld(chunk: Buffer | string | undefined): void {
    const { status, headers } = this.held as NonNullable<typeof this.held>;
    const body = rewriteJsonBody(Buffer.from(chunk ?? ""), this.cachedTokens);
    this.inner.writeHead(status, { ...headers, "content-length": body.length });
    this.inner.end(body);
  }
}
