/** One exchange as the pool runs it: its request bytes, its handler, and the end it comes to once. */
import type { Connection } from "./connection.ts";
import type { ExchangeController, Http1Request, ResponseHandler } from "./exchange.ts";

/** What an exchange needs from its pool. */
export interface ExchangeOwner {
  readonly now: number;
  /** The exchange ended before it got a connection. */
  unqueue(exchange: Exchange): void;
}

/** See the module comment; it is the controller its handler is given. */
export class Exchange implements ExchangeController {
  /** The connection carrying it (or connecting for it), once it has one. */
  connection: Connection | undefined;
  paused = false;
  private ended = false;

  constructor(
    private readonly owner: ExchangeOwner,
    readonly request: Http1Request,
    readonly handler: ResponseHandler,
    /** The request as written (request-head.ts). */
    readonly bytes: Buffer[],
  ) {}

  /** True once the handler had its end or error. */
  get settled(): boolean {
    return this.ended;
  }

  abort(reason: Error): void {
    if (this.ended) return;
    this.ended = true;
    if (this.connection) this.connection.destroy();
    else this.owner.unqueue(this);
    this.handler.onResponseError?.(this, reason);
  }

  pause(): void {
    if (this.ended || this.paused) return;
    this.paused = true;
    this.connection?.socket.pause();
  }

  resume(): void {
    if (this.ended || !this.paused) return;
    this.paused = false;
    const connection = this.connection;
    if (!connection) return;
    // The body timeout counts the server's silence, not the time the reader held us paused.
    connection.lastRead = this.owner.now;
    connection.socket.resume();
  }

  /** The whole response was delivered. */
  end(trailers: Parameters<NonNullable<ResponseHandler["onResponseEnd"]>>[1]): void {
    if (this.ended) return;
    this.ended = true;
    this.handler.onResponseEnd?.(this, trailers);
  }

  /** The exchange failed (its connection is already closed or never opened). */
  fail(error: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.handler.onResponseError?.(this, error);
  }
}
