/**
 * The HTTP edge of a node:http server, shared by the router and `llmd sim`: the header timeout,
 * and answers for clients node rejects before there is a request to answer: headers that did not
 * arrive in time get 408, headers too large 431, anything else that does not parse as HTTP 400
 * (node's `clientError`), and a CONNECT 405 (neither is a forward proxy; node would otherwise drop
 * the connection without a word; nginx answers 400). Each is OpenAI error JSON on a connection
 * that then closes. Bodies are bounded separately, between reads (request-body.ts).
 */
import { type Server, type ServerOptions, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { LlmdError, toOpenAIError } from "./errors.ts";

function errorFor(code: string | undefined, headerTimeoutMs: number): LlmdError {
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    return new LlmdError(
      "request_timeout",
      `the request headers did not arrive within ${headerTimeoutMs} ms`,
    );
  }
  if (code === "HPE_HEADER_OVERFLOW") {
    return new LlmdError("request_headers_too_large", "the request headers exceed the server's limit");
  }
  return new LlmdError("invalid_request", `malformed HTTP request (${code ?? "parse error"})`);
}

/** Writes `error` as a whole HTTP/1.1 response on a raw socket and closes it. */
function endWithError(socket: Duplex, error: LlmdError): void {
  const { status, body, headers } = toOpenAIError(error);
  const payload = JSON.stringify(body);
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n${extra.join("")}\r\n${payload}`,
  );
}

/** A `clientError` listener for a server whose header timeout is `headerTimeoutMs`. */
function answerClientError(headerTimeoutMs: number) {
  return (err: NodeJS.ErrnoException, socket: Duplex): void => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    endWithError(socket, errorFor(err.code, headerTimeoutMs));
  };
}

/** A `connect` listener: 405 `method_not_allowed` for every CONNECT, then the connection closes. */
function answerConnect(_req: unknown, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const error = new LlmdError("method_not_allowed", "CONNECT is not supported: this server is not a proxy");
  endWithError(socket, error);
}

/**
 * node:http options for the edge: headers within `headerTimeoutMs` (node checks at a quarter of
 * it, so a stalled client is cut within 1.25× the timeout), no total request timeout (the body is
 * bounded between reads, as nginx does), idle keep-alive connections kept 65 s (node's 5 s races
 * a reusing proxy: "other side closed" before any response, a spurious 502).
 */
export function edgeServerOptions(headerTimeoutMs: number): ServerOptions {
  return {
    keepAliveTimeout: 65_000,
    headersTimeout: headerTimeoutMs,
    requestTimeout: 0,
    connectionsCheckingInterval: Math.max(10, Math.min(30_000, headerTimeoutMs / 4)),
  };
}

/** Answers what node rejects before a request (`clientError`) and every CONNECT on `server`. */
export function answerEdgeErrors(server: Server, headerTimeoutMs: number): void {
  server.on("clientError", answerClientError(headerTimeoutMs));
  server.on("connect", answerConnect);
}
