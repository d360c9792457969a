/**
 * A keep-alive pool of HTTP/1.1 connections to one server, on node:net: an exchange takes the
 * most recently freed connection (or opens one), one request per connection at a time. Timeouts
 * (connect, response head, gap between body reads, idle) are checked by one sweep per pool at a
 * quarter of the shortest of them, against a clock the sweep advances, so a request costs no
 * timer of its own.
 */
import { type Connection, type ConnectionOwner, openConnection } from "./connection.ts";
import { Http1Error } from "./errors.ts";
import type { Http1Request, ResponseHandler } from "./exchange.ts";
import { Exchange, type ExchangeOwner } from "./exchange-state.ts";
import { requestBytes } from "./request-head.ts";

/** A pool's limits; every duration in ms. */
export interface Http1PoolOptions {
  /** Most connections at once (default unlimited); exchanges beyond it wait in order. */
  connections?: number | undefined;
  connectTimeoutMs: number;
  /** From the request written to the response head. */
  headersTimeoutMs: number;
  /** Longest silence while reading a body (not counting time paused by the reader). */
  bodyTimeoutMs: number;
  /** Longest idle time between exchanges (shortened by the server's `keep-alive: timeout=` hint). */
  keepAliveMs: number;
}

const SWEEP_MIN_MS = 10;
const SWEEP_MAX_MS = 1000;

/** Connections to `host:port`. */
export class Http1Pool implements ConnectionOwner, ExchangeOwner {
  now = Date.now();
  readonly maxIdleMs: number;
  private readonly hostHeader: string;
  private readonly connections = new Set<Connection>();
  /** Free connections, the most recently freed last. */
  private readonly idle: Connection[] = [];
  private readonly waiting: Exchange[] = [];
  private readonly sweepMs: number;
  private sweeper: NodeJS.Timeout | undefined;
  private shut = false;

  constructor(
    readonly host: string,
    readonly port: number,
    private readonly options: Http1PoolOptions,
  ) {
    this.hostHeader = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    this.maxIdleMs = options.keepAliveMs;
    const shortest = Math.min(
      options.connectTimeoutMs,
      options.headersTimeoutMs,
      options.bodyTimeoutMs,
      options.keepAliveMs,
    );
    this.sweepMs = Math.max(SWEEP_MIN_MS, Math.min(SWEEP_MAX_MS, shortest / 4));
  }

  /** Sends `request`, calling `handler` with the response; never throws. */
  dispatch(request: Http1Request, handler: ResponseHandler): void {
    let bytes: Buffer[] = [];
    let invalid: unknown;
    try {
      bytes = requestBytes(this.hostHeader, request);
    } catch (error) {
      invalid = error;
    }
    const exchange = new Exchange(this, request, handler, bytes);
    handler.onRequestStart?.(exchange, {});
    if (exchange.settled) return;
    if (invalid) exchange.fail(invalid as Error);
    else if (this.shut) exchange.fail(poolClosed());
    else this.assign(exchange);
  }

  /** True once {@link close} ran: every later exchange fails. */
  get closed(): boolean {
    return this.shut;
  }

  /** Connections open (busy, idle or connecting). */
  get size(): number {
    return this.connections.size;
  }

  /** Closes every connection; exchanges still running or waiting fail with `HTTP1_POOL_CLOSED`. */
  close(): void {
    this.shut = true;
    const error = poolClosed();
    for (const exchange of this.waiting.splice(0)) exchange.fail(error);
    for (const connection of [...this.connections]) connection.fail(error);
  }

  release(connection: Connection): void {
    if (this.shut) {
      connection.destroy();
      return;
    }
    // A reader's back-pressure paused the last exchange; the next one (or the idle wait for the
    // server's close) reads again.
    if (connection.socket.isPaused()) connection.socket.resume();
    const next = this.nextWaiting();
    if (next) {
      connection.start(next);
      return;
    }
    connection.since = this.now;
    this.idle.push(connection);
  }

  remove(connection: Connection): void {
    if (!this.connections.delete(connection)) return;
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
    if (this.connections.size === 0) this.stopSweep();
    const next = this.shut ? undefined : this.nextWaiting();
    if (next) this.open(next);
  }

  unqueue(exchange: Exchange): void {
    const at = this.waiting.indexOf(exchange);
    if (at >= 0) this.waiting.splice(at, 1);
  }

  private assign(exchange: Exchange): void {
    const free = this.takeIdle();
    if (free) free.start(exchange);
    else if (this.options.connections === undefined || this.connections.size < this.options.connections)
      this.open(exchange);
    else this.waiting.push(exchange);
  }

  /** The most recently freed connection still inside its idle window, closing expired ones. */
  private takeIdle(): Connection | undefined {
    for (let connection = this.idle.pop(); connection; connection = this.idle.pop()) {
      if (!connection.socket.destroyed && this.now - connection.since < connection.idleMs) return connection;
      connection.destroy();
      this.connections.delete(connection);
    }
    return undefined;
  }

  private nextWaiting(): Exchange | undefined {
    let next = this.waiting.shift();
    while (next?.settled) next = this.waiting.shift();
    return next;
  }

  private open(exchange: Exchange): void {
    if (this.connections.size === 0) this.startSweep();
    this.connections.add(openConnection(this.host, this.port, this, exchange));
  }

  private startSweep(): void {
    this.now = Date.now();
    this.sweeper ??= setInterval(this.sweep, this.sweepMs).unref();
  }

  private stopSweep(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private readonly sweep = (): void => {
    const now = (this.now = Date.now());
    const { connectTimeoutMs, headersTimeoutMs, bodyTimeoutMs } = this.options;
    for (const connection of this.connections) {
      const exchange = connection.exchange;
      if (!connection.connected) {
        if (now - connection.since > connectTimeoutMs)
          connection.fail(timeout("HTTP1_CONNECT_TIMEOUT", "connect", connectTimeoutMs));
      } else if (!exchange) {
        if (now - connection.since >= connection.idleMs) connection.destroy();
      } else if (connection.awaitingHead) {
        if (now - connection.since > headersTimeoutMs)
          connection.fail(timeout("HTTP1_HEADERS_TIMEOUT", "the response head", headersTimeoutMs));
      } else if (!exchange.paused && now - connection.lastRead > bodyTimeoutMs)
        connection.fail(timeout("HTTP1_BODY_TIMEOUT", "the next body read", bodyTimeoutMs));
    }
  };
}

function poolClosed(): Http1Error {
  return new Http1Error("HTTP1_POOL_CLOSED", "the connection pool is closed");
}

function timeout(code: Http1Error["code"], what: string, ms: number): Http1Error {
  return new Http1Error(code, `no ${what} within ${ms} ms`);
}
