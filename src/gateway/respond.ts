/** Writing gateway-originated responses: JSON bodies, OpenAI errors, SSE error events. */
import type { OutgoingHttpHeaders } from "node:http";
import type { ClientSink } from "./types.ts";
import { LlmdError, toOpenAIError } from "../api/errors.ts";

/** Sends a JSON body with an explicit length (no-op when the client is gone). */
export function sendJson(
  res: ClientSink,
  status: number,
  body: unknown,
  headers: OutgoingHttpHeaders = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const payload = Buffer.from(JSON.stringify(body));
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": payload.length,
  });
  res.end(payload);
}

/** Sends any error as OpenAI error JSON with its status and llm-d headers. */
export function sendError(res: ClientSink, err: unknown, headers: OutgoingHttpHeaders = {}): void {
  const { status, body, headers: errorHeaders } = toOpenAIError(err);
  sendJson(res, status, body, { ...headers, ...errorHeaders });
}

/** The `data: {"error":…}` event that ends a failed OpenAI stream. */
export function sseErrorEvent(err: LlmdError): string {
  return `data: ${JSON.stringify(toOpenAIError(err).body)}\n\n`;
}

/** Ends an SSE stream that already started with its sink's error event (never hangs). */
export function endStreamWithError(res: ClientSink, err: LlmdError): void {
  if (res.destroyed || res.writableEnded) return;
  if (res.endWithError) res.endWithError(err);
  else res.end(sseErrorEvent(err));
}

/** The upstream failed after the request reached it (502, or 504 for a timeout). */
export function upstreamFailure(message: string, timeout: boolean): LlmdError {
  return timeout ? new LlmdError("upstream_timeout", message) : new LlmdError("upstream_failed", message);
}
