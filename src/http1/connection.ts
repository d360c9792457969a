/**
 * One keep-alive connection to a server, carrying one exchange at a time (never pipelined): it
 * writes the request, parses the response head (skipping 1xx), delivers the body by its framing,
 * and goes back to its pool only after a whole response, with nothing left to write or read.
 */
import type { IncomingHttpHeaders } from "node:http";
import { connect, type Socket } from "node:net";
import { ChunkedDecoder } from "./chunked-decoder.ts";
import { badResponse, Http1Error } from "./errors.ts";
import type { Exchange } from "./exchange-state.ts";
import { type BodyFraming, bodyFraming, reuseWindowMs } from "./response-framing.ts";
import { parseResponseHead } from "./response-head.ts";

/** What a connection needs from its pool. */
export interface ConnectionOwner {
  /** A coarse clock (ms), advanced by the pool's timeout sweep. */
  readonly now: number;
  readonly maxIdleMs: number;
  /** The connection finished an exchange and may carry another. */
  release(connection: Connection): void;
  /** The connection closed. */
  remove(connection: Connection): void;
}

const NO_TRAILERS: IncomingHttpHeaders = Object.freeze(Object.create(null));

/**
 * The one buffer every connection's socket reads into (node:net's `onread`), each read copied out
 * before the next: a read then costs one small pooled allocation instead of a 64 KiB one shrunk
 * to the read, an ArrayBuffer and the Readable stream's machinery.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** A connection to `host:port` for `first` (connecting). */
export function openConnection(
  host: string,
  port: number,
  owner: ConnectionOwner,
  first: Exchange,
): Connection {
  let connection: Connection | undefined;
  const socket = connect({
    host,
    port,
    noDelay: true,
    onread: {
      buffer: READ_BUFFER,
      callback: (bytes) => {
        connection?.read(bytes);
        return true;
      },
    },
  });
  connection = new Connection(socket, owner, first);
  return connection;
}

/** One socket to the server and the exchange it carries, if any. */
export class Connection {
  /** The exchange in progress (or waiting for the connect). */
  exchange: Exchange | undefined;
  connected = false;
  /** When the current state began (the owner's clock): connect, request written, idle. */
  since: number;
  /** Last body byte (the owner's clock); the body timeout runs from it. */
  lastRead = 0;
  /** How long this connection may idle in the pool (set by each response). */
  idleMs = 0;
  private head: Buffer | undefined;
  private framing: BodyFraming | undefined;
  private remaining = 0;
  private decoder: ChunkedDecoder | undefined;
  private peerEnded = false;
  private lastError: Error | undefined;

  constructor(
    readonly socket: Socket,
    private readonly owner: ConnectionOwner,
    first: Exchange,
  ) {
    this.exchange = first;
    first.connection = this;
    this.since = owner.now;
    socket.on("connect", this.onConnect);
    socket.on("end", this.onEnd);
    socket.on("error", this.onError);
    socket.on("close", this.onClose);
  }

  /** Whether the pool's response timeouts apply: the head is awaited or the body is being read. */
  get awaitingHead(): boolean {
    return this.connected && this.exchange !== undefined && this.framing === undefined;
  }

  /** Sends `exchange`'s request on this (connected, free) connection. */
  start(exchange: Exchange): void {
    this.exchange = exchange;
    exchange.connection = this;
    this.since = this.owner.now;
    const bytes = exchange.bytes;
    if (bytes.length === 1) this.socket.write(bytes[0] as Buffer);
    else {
      this.socket.cork();
      for (const piece of bytes) this.socket.write(piece);
      this.socket.uncork();
    }
  }

  /** Closes the socket; an exchange still on it is not told (its caller is ending it). */
  destroy(): void {
    this.exchange = undefined;
    this.socket.destroy();
  }

  /** Ends the exchange with `error` and closes the connection. */
  fail(error: Error): void {
    const exchange = this.exchange;
    this.destroy();
    exchange?.fail(error);
  }

  private readonly onConnect = (): void => {
    this.connected = true;
    const exchange = this.exchange;
    if (exchange) this.start(exchange);
    else this.owner.release(this);
  };

  /** `bytes` were read into `READ_BUFFER`. */
  read(bytes: number): void {
    const chunk = Buffer.allocUnsafe(bytes);
    READ_BUFFER.copy(chunk, 0, 0, bytes);
    this.onData(chunk);
  }

  private onData(chunk: Buffer): void {
    const exchange = this.exchange;
    if (!exchange) {
      // Bytes nobody asked for (nothing is pipelined): the connection's framing is lost.
      this.socket.destroy();
      return;
    }
    try {
      if (this.framing) this.body(exchange, chunk, 0);
      else this.readHead(exchange, chunk);
    } catch (error) {
      if (!(error instanceof Http1Error)) throw error;
      if (this.exchange === exchange) this.fail(error);
      return;
    }
    if (this.exchange === exchange && this.framing) exchange.handler.onResponseReadEnd?.(exchange);
  }

  private readHead(exchange: Exchange, chunk: Buffer): void {
    let buf = this.head ? Buffer.concat([this.head, chunk]) : chunk;
    this.head = undefined;
    for (;;) {
      const head = parseResponseHead(buf);
      if (!head) {
        this.head = buf;
        return;
      }
      if (head.status === 101) throw badResponse("101 Switching Protocols to a request that asked for none");
      if (head.status >= 200) {
        const framing = bodyFraming(exchange.request.method, head);
        this.framing = framing;
        this.idleMs = reuseWindowMs(head, framing, this.owner.maxIdleMs);
        this.lastRead = this.owner.now;
        exchange.handler.onResponseStart?.(exchange, head.status, head.headers, head.statusText);
        if (this.exchange !== exchange) return;
        if (framing.kind === "length") this.remaining = framing.length;
        else if (framing.kind === "chunked") this.decoder = new ChunkedDecoder();
        if (framing.kind === "none") this.complete(exchange, buf.length > head.bytes, NO_TRAILERS);
        else if (head.bytes < buf.length) this.body(exchange, buf, head.bytes);
        return;
      }
      // 1xx (100 Continue, 103 Early Hints): informational, the final answer follows.
      if (head.bytes === buf.length) return;
      buf = buf.subarray(head.bytes);
    }
  }

  private body(exchange: Exchange, buf: Buffer, at: number): void {
    this.lastRead = this.owner.now;
    const handler = exchange.handler;
    switch ((this.framing as BodyFraming).kind) {
      case "length": {
        const end = Math.min(buf.length, at + this.remaining);
        this.remaining -= end - at;
        handler.onResponseData?.(exchange, at === 0 && end === buf.length ? buf : buf.subarray(at, end));
        if (this.remaining === 0 && this.exchange === exchange)
          this.complete(exchange, end < buf.length, NO_TRAILERS);
        return;
      }
      case "chunked": {
        const decoder = this.decoder as ChunkedDecoder;
        const end = decoder.push(buf, at, this.onChunk);
        if (end >= 0) this.complete(exchange, end < buf.length, decoder.trailers);
        return;
      }
      default:
        handler.onResponseData?.(exchange, at === 0 ? buf : buf.subarray(at));
    }
  }

  private readonly onChunk = (payload: Buffer, frame: Buffer | undefined): boolean => {
    const exchange = this.exchange as Exchange;
    const handler = exchange.handler;
    if (frame && handler.onResponseFrame) handler.onResponseFrame(exchange, payload, frame);
    else handler.onResponseData?.(exchange, payload);
    return this.exchange === exchange;
  };

  /** The response ended; `extra`: bytes followed it, which no request asked for. */
  private complete(exchange: Exchange, extra: boolean, trailers: IncomingHttpHeaders): void {
    const reusable =
      this.idleMs > 0 &&
      !extra &&
      !this.peerEnded &&
      !this.socket.destroyed &&
      this.socket.writableLength === 0;
    this.exchange = undefined;
    this.framing = undefined;
    this.decoder = undefined;
    exchange.end(trailers);
    if (reusable && !this.socket.destroyed) this.owner.release(this);
    else this.socket.destroy();
  }

  private readonly onEnd = (): void => {
    this.peerEnded = true;
    const exchange = this.exchange;
    if (exchange && this.framing?.kind === "until-close") this.complete(exchange, false, NO_TRAILERS);
    else this.socket.destroy();
  };

  private readonly onError = (error: Error): void => {
    this.lastError = error;
  };

  private readonly onClose = (): void => {
    const exchange = this.exchange;
    this.exchange = undefined;
    this.owner.remove(this);
    if (!exchange) return;
    const error =
      this.lastError ??
      new Http1Error("HTTP1_CLOSED", "the server closed the connection before the response ended");
    exchange.fail(error);
  };
}
