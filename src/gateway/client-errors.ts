/**
 * Answers for clients node:http rejects before there is a request to answer (node's
 * `clientError`): headers that did not arrive within the header timeout get 408, headers too
 * large 431, anything else that does not parse as HTTP 400, each as OpenAI error JSON on a
 * connection that then closes.
 */
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { LlmdError, toOpenAIError } from "../api/errors.ts";

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

/** A `clientError` listener for a gateway whose header timeout is `headerTimeoutMs`. */
export function answerClientError(headerTimeoutMs: number) {
  return (err: NodeJS.ErrnoException, socket: Duplex): void => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, body, headers } = toOpenAIError(errorFor(err.code, headerTimeoutMs));
    const payload = JSON.stringify(body);
    const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\ncontent-type: application/json\r\n` +
        `content-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n${extra.join("")}\r\n${payload}`,
    );
  };
}
