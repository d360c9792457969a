/** The client's own failures, each with a `code` the caller can tell apart (as node's `ECONNREFUSED`). */

/** Why an exchange with a server failed, when node:net's own error code does not say it. */
export type Http1ErrorCode =
  /** No connection within the connect timeout. */
  | "HTTP1_CONNECT_TIMEOUT"
  /** No response head within the headers timeout. */
  | "HTTP1_HEADERS_TIMEOUT"
  /** No body byte within the body timeout. */
  | "HTTP1_BODY_TIMEOUT"
  /** The server closed the connection before its response ended. */
  | "HTTP1_CLOSED"
  /** The server's bytes are not an HTTP/1.1 response (bad head, framing or length). */
  | "HTTP1_BAD_RESPONSE"
  /** The request cannot be written as it is (an invalid header, method or path). */
  | "HTTP1_BAD_REQUEST"
  /** The pool was closed with the request still waiting or running. */
  | "HTTP1_POOL_CLOSED";

/** An exchange's failure with its {@link Http1ErrorCode}. */
export class Http1Error extends Error {
  override readonly name = "Http1Error";
  constructor(
    readonly code: Http1ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** The server broke the HTTP/1.1 framing: `detail` says where. */
export function badResponse(detail: string): Http1Error {
  return new Http1Error("HTTP1_BAD_RESPONSE", `invalid HTTP/1.1 response: ${detail}`);
}
