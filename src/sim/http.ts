/**
 * Small node:http helpers for the simulator: bounded body reading, JSON and OpenAI-error replies,
 * and Server-Sent Events in OpenAI's two framings: chat/completions' `data: {...}\n\n` closed by
 * `data: [DONE]`, and the Responses API's typed `event: <type>\ndata: {...}\n\n`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { LlmdError, toOpenAIError } from "../api/errors.ts";

/** Body text, or the error to reply with (413 over `limitBytes`). */
export type BodyResult = { ok: true; text: string } | { ok: false; error: LlmdError };

function tooLarge(limitBytes: number): BodyResult {
  const message = `Request body exceeds the limit of ${limitBytes} bytes`;
  return { ok: false, error: new LlmdError("request_too_large", message) };
}

/** Reads the whole request body as UTF-8, stopping early once it exceeds `limitBytes`. */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<BodyResult> {
  const declared = Number(req.headers["content-length"]);
  if (declared > limitBytes) return Promise.resolve(tooLarge(limitBytes));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        req.off("data", onData);
        resolve(tooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve({ ok: true, text: Buffer.concat(chunks, size).toString("utf8") }));
    req.on("error", (err) => resolve({ ok: false, error: new LlmdError("invalid_request", err.message) }));
  });
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
 * Sends an OpenAI error body. A 413 also closes the connection, since the rest of the oversized body
 * is left unread.
 */
export function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, body, headers } = toOpenAIError(err);
  if (status === 413) headers.connection = "close";
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
