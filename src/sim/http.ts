/**
 * Small node:http helpers for the simulator: body reading under the edge's bounds, JSON and OpenAI-error replies,
 * and Server-Sent Events in OpenAI's two framings: chat/completions' `data: {...}\n\n` closed by
 * `data: [DONE]`, and the Responses API's typed `event: <type>\ndata: {...}\n\n`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { LlmdError, toOpenAIError } from "../api/errors.ts";
import { closesConnection, readBody as readBoundedBody } from "../api/request-body.ts";
import type { SimContext } from "./context.ts";

/** Body text, or the error to reply with. */
export type BodyResult = { ok: true; text: string } | { ok: false; error: LlmdError };

/**
 * Reads the whole request body as UTF-8 under the edge's bounds (src/api/request-body.ts): 413
 * past `--max-body-bytes`, 408 when no byte arrives for `--body-timeout`, 429 when the bodies
 * held would pass `--max-inflight-body-bytes`. A body's bytes count until its response closes.
 */
export async function readBody(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<BodyResult> {
  const lease = ctx.bodies.lease();
  res.once("close", () => lease.release());
  const limits = { limitBytes: ctx.config["max-body-bytes"], timeoutMs: ctx.config["body-timeout"], lease };
  const raw = await readBoundedBody(req, limits).catch(
    (err: Error) => new LlmdError("invalid_request", err.message),
  );
  if (raw instanceof LlmdError) return { ok: false, error: raw };
  return { ok: true, text: raw.toString("utf8") };
}

/** Sends `body` as JSON with `status`. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/**
 * Sends an OpenAI error body. A 413, or a body timeout or budget refusal, also closes the
 * connection, since the rest of the body is left unread.
 */
export function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, body, headers } = toOpenAIError(err);
  if (status === 413 || (err instanceof LlmdError && closesConnection(err))) headers.connection = "close";
  sendJson(res, status, body, headers);
}

/** Starts an SSE response. */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
}

/** One untyped SSE event carrying `payload` as JSON. */
export function sseData(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

/** The event that ends a chat or completions stream. */
export const SSE_DONE = "data: [DONE]\n\n";
