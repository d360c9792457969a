/**
 * The contract between the client and whoever reads a response (the gateway's forward handler):
 * the callbacks of one request/response exchange, and the controller that aborts, pauses and
 * resumes it. The names and order match undici's `Dispatcher.DispatchHandler`, so one handler
 * serves both clients.
 */
import type { IncomingHttpHeaders } from "node:http";

/** One request to send. */
export interface Http1Request {
  method: string;
  /** The request target (`/v1/completions?x=1`). */
  path: string;
  /** Header fields; the client writes `host`, `content-length` and the connection's own fields. */
  headers: Readonly<Record<string, string>>;
  body?: Buffer | undefined;
}

/** Controls one exchange; a no-op once it ended. */
export interface ExchangeController {
  /** Ends the exchange with `reason` (the handler's `onResponseError` gets it); its connection is closed. */
  abort(reason: Error): void;
  /** Stops reading the response (back-pressure); at most the read in hand is still delivered. */
  pause(): void;
  resume(): void;
}

/** Callbacks of one exchange, in order: start, head, body pieces, then end or error (exactly one). */
export interface ResponseHandler {
  onRequestStart?(controller: ExchangeController, context: object): void;
  onResponseStart?(
    controller: ExchangeController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage: string,
  ): void;
  /** A piece of the body, de-chunked. */
  onResponseData?(controller: ExchangeController, chunk: Buffer): void;
  /**
   * A whole chunk of a chunked body with its frame (size line, data, CRLF) as the server sent it,
   * when the frame came in one read and has no extension; without this callback the data goes to
   * `onResponseData`.
   */
  onResponseFrame?(controller: ExchangeController, payload: Buffer, frame: Buffer): void;
  /**
   * Every body piece of one socket read was delivered (and the body goes on): a relay that held
   * the read's pieces writes them now, one client write per upstream read.
   */
  onResponseReadEnd?(controller: ExchangeController): void;
  onResponseEnd?(controller: ExchangeController, trailers: IncomingHttpHeaders): void;
  onResponseError?(controller: ExchangeController, error: Error): void;
}
