/**
 * The proxy hop for one attempt on one endpoint, through the router's HTTP/1.1 client
 * (src/http1) or undici's dispatch API (the same handler serves both): streaming (SSE) bodies are
 * piped to the client with back-pressure (the upstream is paused while the client socket is full,
 * so a slow reader holds only its own stream), JSON bodies are buffered (they are small, and
 * buffering lets an upstream failure become a clean 502). With the HTTP/1.1 client, the chunks of
 * one upstream read are written to the client when that read has been handled (one client write
 * per upstream read), and a read's lone chunk frame goes to a chunked client leg as it came.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { ClientSink } from "./types.ts";
import type { Dispatcher } from "undici";
import { LlmdError } from "../api/errors.ts";
import type { ExchangeController, ResponseHandler } from "../http1/exchange.ts";
import { Http1Pool } from "../http1/pool.ts";
import { flowOutcomeError } from "../flow-control/outcome-errors.ts";
import type { ResponseUsage, TerminationCause } from "../scheduler/framework/types.ts";
import { type ChunkedWriter, chunkedWriterFor } from "./chunked-writer.ts";
import { clientResponseHeaders } from "./headers.ts";
import { endStreamWithError, sendError, upstreamFailure } from "./respond.ts";
import type { Flushable, StreamFlusher } from "./stream-flusher.ts";
import { BodyTail, findUsage } from "./usage.ts";
import type { Interrupt } from "./interrupt.ts";

/** What one attempt produced. */
export type ForwardOutcome =
  /**
   * The endpoint could not be reached, or answered 503 `rejected-shutting-down` (it drains and did
   * no work: `draining`); nothing was sent to the client: try elsewhere.
   */
  | { kind: "unreachable"; error: Error; draining?: true }
  /** The attempt ended (the client has its answer, or is gone). */
  | {
      kind: "done";
      cause: TerminationCause;
      status: number;
      usage: ResponseUsage | undefined;
      /** Why the upstream failed (error and timeout causes only). */
      failure?: string;
    };

/** One upstream request. */
export interface ForwardRequest {
  path: string;
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  requestId: string;
  /** Endpoint key echoed in `x-llmd-endpoint`. */
  endpointKey: string;
  /** Called once, when the first body byte arrives (first token for streams). */
  onFirstByte: () => void;
  /** Headers plugins added for the client response (llm-d's `response-headers` state). */
  responseHeaders?: ReadonlyMap<string, string> | undefined;
  /**
   * Aborted when flow control evicts the request or the drain timeout passes; its `reason` (an
   * `LlmdError`: 429 `evicted`, 503 `shutting_down`) answers the client: as an error body, or as an
   * SSE error event once a stream started.
   */
  signal?: Interrupt | undefined;
  /**
   * Coalesces a stream's chunks after the first (the gateway's `streamFlushMs`). At 0 ms (or absent)
   * the HTTP/1.1 client's reads decide: each read's chunks are written at its end; through undici
   * an absent flusher writes each chunk through.
   */
  flusher?: StreamFlusher | undefined;
}

/** Coalesced stream bytes that are written at once rather than at the flusher's next tick. */
const MAX_PENDING_BYTES = 64 * 1024;

/** Largest non-streaming upstream body the gateway buffers (64 MiB). */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/** Error codes meaning the request never reached the endpoint (safe to send elsewhere). */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  "HTTP1_CONNECT_TIMEOUT",
]);
const TIMEOUT_CODES = new Set([
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "HTTP1_HEADERS_TIMEOUT",
  "HTTP1_BODY_TIMEOUT",
]);

/** A model server's connections: the router's HTTP/1.1 pool, or any undici dispatcher. */
export type Upstream = Http1Pool | Dispatcher;

/** A model server's refusal while it drains: 503 with llm-d's dropped reason (`llmd sim` answers so). */
function isDrainingRefusal(statusCode: number, headers: IncomingHttpHeaders): boolean {
  return statusCode === 503 && headers["x-llm-d-request-dropped-reason"] === "rejected-shutting-down";
}

function errorCode(err: Error): string {
  return String((err as { code?: unknown }).code ?? "");
}

class ClientGone extends Error {
  override readonly name = "ClientGone";
}

/** Forwards `req` through `upstream`, writing the answer to `res`. Never rejects. */
export function forward(upstream: Upstream, req: ForwardRequest, res: ClientSink): Promise<ForwardOutcome> {
  return new Promise((resolve) => forwardThen(upstream, req, res, resolve));
}

/** {@link forward} without a promise: `done` gets the outcome once, from the upstream's events. */
export function forwardThen(
  upstream: Upstream,
  req: ForwardRequest,
  res: ClientSink,
  done: (outcome: ForwardOutcome) => void,
): void {
  new ForwardHandler(req, res, done).start(upstream);
}

class ForwardHandler implements Dispatcher.DispatchHandler, ResponseHandler, Flushable {
  private controller: ExchangeController | undefined;
  private clientGone = false;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private receivedBytes = 0;
  /** Set for streams (SSE), which keep only their tail for usage; JSON bodies are buffered whole. */
  private tail: BodyTail | undefined;
  private buffered: Buffer[] = [];
  /**
   * The first stream chunk waiting to be written (the read's end, the flusher's tick); `pending`
   * holds all of them only once there are several, so a read of one chunk touches no array.
   */
  private pendingFirst: Buffer | undefined;
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  /**
   * The frame a lone pending chunk came in, as the model server sent it (src/http1): written as it
   * is, no copy. Several pending chunks are framed again as one, so a flush stays one HTTP chunk.
   */
  private pendingFrame: Buffer | undefined;
  /** Frames a stream straight onto the client's socket when the sink is a plain HTTP/1.1 response. */
  private writer: ChunkedWriter | undefined;
  /** Pending chunks are written at the end of each upstream read (src/http1, no flush timer). */
  private writeAtReadEnd = false;
  private evictedWith: LlmdError | undefined;
  /** `onEvict`'s slot on the request's interrupt. */
  private evictionSlot = -1;
  /** Set once the outcome is resolved; later upstream events (after a refusal's abort) are ignored. */
  private settled = false;
  /** Listeners, bound methods (why: RequestFlow's callbacks in inference.ts). */
  private readonly onClientClose: () => void;
  private readonly resumeUpstream: () => void;
  private readonly onEvict: () => void;

  constructor(
    private readonly req: ForwardRequest,
    private readonly res: ClientSink,
    private readonly resolve: (outcome: ForwardOutcome) => void,
  ) {
    this.onClientClose = this.clientClosed.bind(this);
    this.resumeUpstream = this.resume.bind(this);
    this.onEvict = this.evicted.bind(this);
  }

  private clientClosed(): void {
    if (this.res.writableFinished) return;
    this.clientGone = true;
    this.controller?.abort(new ClientGone("client disconnected"));
  }

  private resume(): void {
    this.controller?.resume();
  }

  private evicted(): void {
    const reason = this.req.signal?.reason;
    // Flow control's own wire error when the signal's owner gave no LlmdError reason.
    this.evictedWith = reason instanceof LlmdError ? reason : (flowOutcomeError("evicted") as LlmdError);
    this.controller?.abort(this.evictedWith);
  }

  start(upstream: Upstream): void {
    const signal = this.req.signal;
    if (signal?.aborted) {
      this.onEvict();
      this.answerEvicted(this.evictedWith as LlmdError);
      return;
    }
    if (signal) this.evictionSlot = signal.watch(this.onEvict);
    this.res.once("close", this.onClientClose);
    const { path, headers, body } = this.req;
    const request = { path, method: "POST" as const, headers, body };
    if (upstream instanceof Http1Pool) {
      this.writeAtReadEnd = (this.req.flusher?.intervalMs ?? 0) === 0;
      upstream.dispatch(request, this);
    } else upstream.dispatch({ ...request, origin: undefined }, this);
  }

  onRequestStart(controller: ExchangeController): void {
    this.controller = controller;
    if (this.evictedWith) controller.abort(this.evictedWith);
    else if (this.clientGone || this.res.destroyed) controller.abort(new ClientGone("client disconnected"));
  }

  onResponseStart(_controller: ExchangeController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.headers = headers;
    if (isDrainingRefusal(statusCode, headers)) {
      this.finish({ kind: "unreachable", error: new Error("the endpoint is shutting down"), draining: true });
      // The refusal's body is not needed: drop the upstream request.
      this.controller?.abort(new Error("the endpoint refused the request while draining"));
      return;
    }
    if (!String(headers["content-type"] ?? "").startsWith("text/event-stream")) return;
    this.tail = new BodyTail();
    if (!this.res.destroyed) {
      this.res.writeHead(
        statusCode,
        clientResponseHeaders(headers, this.req.endpointKey, this.req.requestId, this.req.responseHeaders),
      );
      this.res.flushHeaders();
      this.writer = chunkedWriterFor(this.res);
    }
  }

  onResponseData(controller: ExchangeController, chunk: Buffer): void {
    this.take(controller, chunk, undefined);
  }

  onResponseFrame(controller: ExchangeController, payload: Buffer, frame: Buffer): void {
    this.take(controller, payload, frame);
  }

  /** One piece of the body; `frame`: the whole chunk frame it came in, when the client gave it. */
  private take(controller: ExchangeController, chunk: Buffer, frame: Buffer | undefined): void {
    if (this.settled) return;
    if (this.receivedBytes === 0) this.req.onFirstByte();
    this.receivedBytes += chunk.length;
    if (!this.tail) {
      this.buffered.push(chunk);
      if (this.receivedBytes > MAX_BUFFERED_BYTES) controller.abort(new Error("upstream body too large"));
      return;
    }
    this.tail.push(chunk);
    if (this.res.destroyed) return;
    this.hold(chunk, frame);
    if (this.writeAtReadEnd) {
      if (this.pendingBytes >= MAX_PENDING_BYTES) this.writePending();
      return;
    }
    const flusher = this.req.flusher;
    // The first chunk (the first token) always goes out at once.
    if (!flusher || this.receivedBytes === chunk.length || this.pendingBytes >= MAX_PENDING_BYTES)
      this.flush();
    else flusher.schedule(this);
  }

  private hold(chunk: Buffer, frame: Buffer | undefined): void {
    this.pendingBytes += chunk.length;
    const first = this.pendingFirst;
    if (first === undefined) {
      this.pendingFirst = chunk;
      this.pendingFrame = frame;
      return;
    }
    if (this.pending.length === 0) this.pending.push(first);
    this.pending.push(chunk);
    this.pendingFrame = undefined;
  }

  /** The upstream read's chunks were all taken: they leave as one write. */
  onResponseReadEnd(): void {
    if (this.writeAtReadEnd && !this.settled) this.writePending();
  }

  /** Writes the coalesced chunks as one (StreamFlusher's tick, a full buffer, the end). */
  flush(): void {
    this.req.flusher?.cancel(this);
    this.writePending();
  }

  private writePending(): void {
    const first = this.pendingFirst;
    if (first === undefined) return;
    if (!this.res.destroyed) this.writeToClient(first);
    if (this.pending.length > 0) this.pending.length = 0;
    this.pendingFirst = undefined;
    this.pendingBytes = 0;
    this.pendingFrame = undefined;
  }

  /** Writes the pending chunks to the client; a full socket pauses the upstream until it drains. */
  private writeToClient(first: Buffer): void {
    const { pending, pendingBytes, writer } = this;
    if (writer) {
      const frame = this.pendingFrame;
      const written = frame
        ? writer.writeFrame(frame)
        : writer.write(pending.length > 0 ? pending : [first], pendingBytes);
      if (written) return;
      writer.onDrain(this.resumeUpstream);
    } else {
      const chunk = pending.length > 0 ? Buffer.concat(pending, pendingBytes) : first;
      if (this.res.write(chunk)) return;
      this.res.once("drain", this.resumeUpstream);
    }
    this.controller?.pause();
  }

  onResponseEnd(): void {
    if (this.settled) return;
    let usage: ResponseUsage | undefined;
    if (this.tail) {
      usage = findUsage(this.tail.buffer());
      this.flush();
      this.res.end();
    } else {
      const body = this.buffered.length === 1 ? (this.buffered[0] as Buffer) : Buffer.concat(this.buffered);
      this.buffered = [];
      usage = findUsage(body);
      this.sendBuffered(body);
    }
    this.finish({ kind: "done", cause: "natural", status: this.status, usage });
  }

  onResponseError(_controller: ExchangeController, error: Error): void {
    if (this.settled) return;
    if (this.evictedWith) {
      this.answerEvicted(this.evictedWith);
      return;
    }
    if (this.clientGone || error instanceof ClientGone) {
      this.finish({ kind: "done", cause: "client-disconnect", status: 499, usage: undefined });
      return;
    }
    const code = errorCode(error);
    if (this.status === 0 && UNREACHABLE_CODES.has(code)) {
      this.finish({ kind: "unreachable", error });
      return;
    }
    const timeout = TIMEOUT_CODES.has(code);
    const failure = upstreamFailure(`endpoint ${this.req.endpointKey} failed: ${error.message}`, timeout);
    if (this.tail) {
      this.flush();
      endStreamWithError(this.res, failure);
    } else sendError(this.res, failure, { "x-llmd-endpoint": this.req.endpointKey });
    this.finish({
      kind: "done",
      cause: timeout ? "timeout" : "error",
      status: failure.status,
      usage: undefined,
      failure: failure.message,
    });
  }

  /** Eviction: an error body, or an SSE error event when the stream already started. */
  private answerEvicted(error: LlmdError): void {
    if (this.tail) {
      this.flush();
      endStreamWithError(this.res, error);
    } else sendError(this.res, error, { "x-llmd-endpoint": this.req.endpointKey });
    const cause = error.code === "evicted" ? "evicted" : "error";
    this.finish({ kind: "done", cause, status: error.status, usage: undefined });
  }

  private sendBuffered(body: Buffer): void {
    if (this.res.destroyed) return;
    const { endpointKey, requestId, responseHeaders } = this.req;
    const headers = clientResponseHeaders(this.headers, endpointKey, requestId, responseHeaders);
    headers["content-length"] = body.length;
    this.res.writeHead(this.status, headers);
    this.res.end(body);
  }

  private finish(outcome: ForwardOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.req.flusher?.cancel(this);
    this.res.off("close", this.onClientClose);
    this.res.off("drain", this.resumeUpstream);
    this.writer?.offDrain(this.resumeUpstream);
    this.req.signal?.unwatch(this.evictionSlot);
    this.resolve(outcome);
  }
}
