/**
 * Reads a request body into one Buffer under three bounds, so a huge, endless or stalled upload
 * costs little: a size limit per body (413), a limit on the bytes of every body the server holds
 * at once (429), and a timeout between two reads (408, as nginx's `client_body_timeout`). The
 * router's and `llmd sim`'s edge.
 */
import type { IncomingMessage } from "node:http";
import type { BodyBuffers } from "./body-buffers.ts";
import { LlmdError } from "./errors.ts";
import { type StallSweep, type StallWatched, stallSweep } from "./stall-sweep.ts";

/** Default request body limit: 16 MiB (long agent contexts fit; a runaway upload does not). */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Default bound on the bodies held at once: 1 GiB (64 bodies at the 16 MiB limit). */
export const DEFAULT_MAX_INFLIGHT_BODY_BYTES = 1024 * 1024 * 1024;

/** nginx's `client_header_timeout` and `client_body_timeout` defaults: 60 s. */
export const DEFAULT_HEADER_TIMEOUT_MS = 60_000;
export const DEFAULT_BODY_TIMEOUT_MS = 60_000;

/** Body too large: 413 OpenAI error. */
export function bodyTooLarge(limitBytes: number): LlmdError {
  return new LlmdError("request_too_large", `request body exceeds ${limitBytes} bytes`);
}

function bodiesFull(limitBytes: number): LlmdError {
  return new LlmdError(
    "request_bodies_full",
    `the server holds ${limitBytes} bytes of request bodies; retry shortly`,
  );
}

function bodyTimedOut(timeoutMs: number): LlmdError {
  return new LlmdError("request_timeout", `no request body bytes arrived for ${timeoutMs} ms`);
}

/**
 * The bytes of request bodies held by requests in flight, against one limit. With `buffers`,
 * large bodies are read into reused buffers, each given back once its lease is released and no
 * `hold` on it is left: only for a server whose request is done with its body's bytes (upstream
 * writes included) by then, or holds them for the work that reads them later.
 */
export class BodyBudget {
  private held = 0;

  constructor(
    readonly limitBytes: number,
    private readonly buffers?: BodyBuffers,
  ) {}

  /** Bytes held now. */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * A request's share: takes bytes as they arrive, gives them all back once. Each body byte costs
   * `heldPerByte` bytes of the budget: what a request keeps besides the raw body (its parsed copy,
   * a rendered prompt) is proportional to it, so the budget bounds memory, not just raw bytes.
   */
  lease(heldPerByte = 1): BodyLease {
    return new BodyLease(this, heldPerByte, this.buffers);
  }

  /** Takes `bytes` unless that would pass the limit. */
  take(bytes: number): boolean {
    if (this.held + bytes > this.limitBytes) return false;
    this.held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.held -= bytes;
  }
}

/** One request's bytes of a {@link BodyBudget}. */
export class BodyLease {
  private taken = 0;
  private received: Buffer | undefined;
  private released = false;
  private holds = 0;

  constructor(
    private readonly budget: BodyBudget,
    private readonly heldPerByte: number,
    private readonly buffers: BodyBuffers | undefined,
  ) {}

  /** True when `bytes` more body bytes would still fit. */
  fits(bytes: number): boolean {
    return this.budget.heldBytes + bytes * this.heldPerByte <= this.budget.limitBytes;
  }

  /** Takes the budget's share of `bytes` body bytes, unless that would pass the limit. */
  take(bytes: number): boolean {
    const cost = bytes * this.heldPerByte;
    if (!this.budget.take(cost)) return false;
    this.taken += cost;
    return true;
  }

  /**
   * A buffer for a declared body of `bytes`, its share taken at once (the read checked it fits):
   * reused when the budget has receive buffers, given back with `release`.
   */
  receiveBuffer(bytes: number): Buffer {
    this.take(bytes);
    if (!this.buffers) return Buffer.allocUnsafe(bytes);
    this.received = this.buffers.take(bytes);
    return this.received;
  }

  /**
   * Keeps the receive buffer from reuse, past `release`, until the returned function is called
   * (once; calling it again does nothing): taken before `release` by work that reads the body's
   * bytes after the request ended (the approximate prefix producer hashes a long prompt then).
   */
  hold(): () => void {
    this.holds++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.holds--;
      this.giveBufferWhenFree();
    };
  }

  /** Gives back the budget's share at once, the receive buffer once no hold is left (idempotent). */
  release(): void {
    this.budget.give(this.taken);
    this.taken = 0;
    this.released = true;
    this.giveBufferWhenFree();
  }

  private giveBufferWhenFree(): void {
    if (!this.released || this.holds > 0 || !this.received) return;
    this.buffers?.give(this.received);
    this.received = undefined;
  }

  get limitBytes(): number {
    return this.budget.limitBytes;
  }
}

/** The bounds of one body read. */
export interface BodyLimits {
  /** Largest body (bytes): more gets 413. */
  limitBytes: number;
  /** Longest gap between two reads (ms; 0 = none): a longer stall gets 408. */
  timeoutMs?: number;
  /** This request's share of the held-bodies budget: past it, 429. */
  lease?: BodyLease;
}

/** Declared bodies from this size on are read into one preallocated buffer. */
const PREALLOCATE_FROM_BYTES = 64 * 1024;

/** An error answering a body read that must close the connection (the rest of the body is unread). */
export function closesConnection(error: LlmdError): boolean {
  return error.code === "request_timeout" || error.code === "request_bodies_full";
}

/**
 * Resolves with the whole body, or with the error value that answers it: 413 once more than
 * `limitBytes` arrive (a declared `content-length` over the limit fails before reading), 429 when
 * the held bodies would pass the budget (also checked against the declared length first), 408
 * when no byte arrives for `timeoutMs`. Rejects only when the client connection fails mid-upload.
 */
export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer | LlmdError> {
  const { limitBytes, timeoutMs = 0, lease } = limits;
  const declared = Number(req.headers["content-length"]);
  if (declared > limitBytes) return Promise.resolve(bodyTooLarge(limitBytes));
  if (lease && declared > 0 && !lease.fits(declared)) return Promise.resolve(bodiesFull(lease.limitBytes));
  // A large declared body is read into one buffer of its size, taken from the budget at once: no
  // chunk list and concatenated copy alive together. Small ones mostly arrive whole, kept as is.
  const whole =
    declared >= PREALLOCATE_FROM_BYTES
      ? (lease?.receiveBuffer(declared) ?? Buffer.allocUnsafe(declared))
      : undefined;
  return new Promise((resolve, reject) => {
    const read = new BodyRead(req, limitBytes, lease, whole, resolve, reject);
    const sweep = timeoutMs > 0 ? stallSweep(timeoutMs) : undefined;
    if (sweep) read.watchBy(sweep);
    // Anonymous listeners, left on the request once it settled (it ignores them then): no
    // `once` wrappers, no removals, no names to keep (tsx's keepNames defines one per named closure).
    req.on("data", (chunk: Buffer) => read.data(chunk));
    req.on("end", () => read.end());
    req.on("error", (err: Error) => read.fail(err));
    req.on("close", () => {
      if (!req.complete) read.fail(new Error("client closed the connection during upload"));
    });
  });
}

/** One body read in progress: its bytes so far, and the one answer it settles with. */
class BodyRead implements StallWatched {
  lastReadAt = Date.now();
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  private sweep: StallSweep | undefined;

  constructor(
    private readonly req: IncomingMessage,
    private readonly limitBytes: number,
    private readonly lease: BodyLease | undefined,
    private readonly whole: Buffer | undefined,
    private readonly resolve: (answer: Buffer | LlmdError) => void,
    private readonly reject: (error: Error) => void,
  ) {}

  watchBy(sweep: StallSweep): void {
    this.sweep = sweep;
    sweep.watch(this);
  }

  data(chunk: Buffer): void {
    if (this.settled) return;
    if (this.sweep) this.lastReadAt = Date.now();
    const { whole, lease, limitBytes } = this;
    if (whole) {
      // node's parser ends the body at its content-length.
      chunk.copy(whole, this.size);
      this.size += chunk.length;
      return;
    }
    this.size += chunk.length;
    if (this.size > limitBytes) this.stop(bodyTooLarge(limitBytes), true);
    else if (lease && !lease.take(chunk.length)) this.stop(bodiesFull(lease.limitBytes), true);
    else this.chunks.push(chunk);
  }

  end(): void {
    if (this.settled) return;
    const { whole, chunks } = this;
    this.settle();
    if (whole) this.resolve(whole);
    else this.resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.size));
  }

  fail(error: Error): void {
    if (this.settled) return;
    this.settle();
    this.reject(error);
  }

  stalled(): void {
    const timeoutMs = this.sweep?.timeoutMs ?? 0;
    this.sweep = undefined;
    this.stop(bodyTimedOut(timeoutMs), false);
  }

  /** Answers with `answer` before the body ended; `drain` reads the rest without keeping it. */
  private stop(answer: LlmdError, drain: boolean): void {
    if (this.settled) return;
    this.settle();
    this.chunks.length = 0;
    // Drained, the reply can still be written on this connection.
    if (drain) this.req.resume();
    this.resolve(answer);
  }

  private settle(): void {
    this.settled = true;
    this.sweep?.unwatch(this);
  }
}
