/**
 * How a response's body is delimited (RFC 9112 §6.3) and whether its connection can carry another
 * request after it (§9.3).
 */
import type { IncomingHttpHeaders } from "node:http";
import { badResponse } from "./errors.ts";
import type { ResponseHead } from "./response-head.ts";

/** The body: none, `length` bytes, chunked, or everything until the server closes. */
export type BodyFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "until-close" };

const NONE: BodyFraming = { kind: "none" };
const CHUNKED: BodyFraming = { kind: "chunked" };
const UNTIL_CLOSE: BodyFraming = { kind: "until-close" };

/** Idle time a server's `keep-alive: timeout=N` hint is cut by, so we never reuse a socket it is closing. */
const HINT_MARGIN_MS = 1000;

/** The body framing of a final (≥ 200) response to `method`. */
export function bodyFraming(method: string, head: ResponseHead): BodyFraming {
  if (method === "HEAD" || head.status === 204 || head.status === 304) return NONE;
  const { headers } = head;
  const coding = headers["transfer-encoding"];
  if (coding !== undefined) {
    const last = fieldList(coding).at(-1);
    return last === "chunked" ? CHUNKED : UNTIL_CLOSE;
  }
  const length = headers["content-length"];
  if (length === undefined) return UNTIL_CLOSE;
  return lengthFraming(fieldList(length));
}

/** One content length, however often it is repeated (RFC 9110 §8.6); anything else is malformed. */
function lengthFraming(values: readonly string[]): BodyFraming {
  const first = values[0] ?? "";
  if (!/^\d{1,15}$/.test(first) || values.some((v) => v !== first))
    throw badResponse(`content-length ${JSON.stringify(values.join(","))}`);
  const length = Number(first);
  return length === 0 ? NONE : { kind: "length", length };
}

/**
 * How long the connection may idle before its next request, at most `maxIdleMs`; 0 when it must
 * close after this response (HTTP/1.0, `connection: close`, a body read to the close, or a
 * `keep-alive` timeout hint too short to use).
 */
export function reuseWindowMs(head: ResponseHead, framing: BodyFraming, maxIdleMs: number): number {
  const { headers } = head;
  if (head.minorVersion === 0 || framing.kind === "until-close") return 0;
  if (headers["transfer-encoding"] !== undefined && headers["content-length"] !== undefined) return 0;
  if (headers.connection !== undefined && fieldList(headers.connection).includes("close")) return 0;
  const hint = keepAliveHintMs(headers);
  return hint === undefined ? maxIdleMs : Math.max(0, Math.min(maxIdleMs, hint - HINT_MARGIN_MS));
}

function keepAliveHintMs(headers: IncomingHttpHeaders): number | undefined {
  const field = headers["keep-alive"];
  if (field === undefined) return undefined;
  const timeout = /(?:^|[,;\s])timeout=(\d+)/i.exec(String(field));
  return timeout ? Number(timeout[1]) * 1000 : undefined;
}

/** A comma-separated field's elements, lower-cased and trimmed, across repeated lines. */
function fieldList(field: string | string[]): string[] {
  const joined = Array.isArray(field) ? field.join(",") : field;
  return joined
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v.length > 0);
}
