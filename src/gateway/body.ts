/**
 * Reads a request body into one Buffer with a hard size limit, so a huge or endless upload costs
 * at most `limitBytes` of memory before the client gets 413.
 */
import type { IncomingMessage } from "node:http";
import { LlmdError } from "../api/errors.ts";

/** Default request body limit: 16 MiB (long agent contexts fit; a runaway upload does not). */
export const DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Body too large: 413 OpenAI error. */
export function bodyTooLarge(limitBytes: number): LlmdError {
  return new LlmdError("request_too_large", `request body exceeds ${limitBytes} bytes`);
}

/**
 * Resolves with the whole body, or with a 413 error value once more than `limitBytes` arrive
 * (a declared `content-length` over the limit fails before reading). Rejects only when the
 * client connection fails mid-upload.
 */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer | LlmdError> {
  const declared = Number(req.headers["content-length"]);
  if (declared > limitBytes) return Promise.resolve(bodyTooLarge(limitBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) {
        req.off("data", onData);
        // Drain the rest without keeping it so the 413 reply can still be written.
        req.resume();
        resolve(bodyTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    req.once("error", reject);
    req.once("close", () => {
      if (!req.complete) reject(new Error("client closed the connection during upload"));
    });
  });
}
