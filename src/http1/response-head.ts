/**
 * Parses an HTTP/1.1 response head (RFC 9112 §4–5): the status line and header fields up to the
 * empty line. Strict where leniency would let a malformed answer be misread: lines end in CRLF,
 * no obsolete line folding, header names are tokens, values hold no control characters.
 */
import type { IncomingHttpHeaders } from "node:http";
import { badResponse } from "./errors.ts";
import { BAD_VALUE, TOKEN } from "./field-syntax.ts";

/** Longest response head read (status line and headers), 64 KiB. */
export const MAX_HEAD_BYTES = 64 * 1024;

/** A parsed response head. */
export interface ResponseHead {
  status: number;
  statusText: string;
  /** 0 for an HTTP/1.0 server, 1 for HTTP/1.1. */
  minorVersion: number;
  /** Lower-case names; a repeated field is an array of its values in order (`__proto__` is dropped). */
  headers: IncomingHttpHeaders;
  /** Bytes of the head, the empty line included. */
  bytes: number;
}

const HEAD_END = Buffer.from("\r\n\r\n");
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: ([\t\x20-\x7e\x80-\xff]*))?$/;

/**
 * The head at the start of `buf`; undefined while its end is not in `buf` yet. Throws an
 * `HTTP1_BAD_RESPONSE` {@link Http1Error} for a malformed head or one over {@link MAX_HEAD_BYTES}.
 */
export function parseResponseHead(buf: Buffer): ResponseHead | undefined {
  const end = buf.indexOf(HEAD_END);
  if (end < 0) {
    if (buf.length > MAX_HEAD_BYTES) throw badResponse(`head over ${MAX_HEAD_BYTES} bytes`);
    return undefined;
  }
  if (end + 4 > MAX_HEAD_BYTES) throw badResponse(`head over ${MAX_HEAD_BYTES} bytes`);
  const lines = buf.toString("latin1", 0, end).split("\r\n");
  const status = STATUS_LINE.exec(lines[0] as string);
  if (!status) throw badResponse(`status line ${JSON.stringify((lines[0] as string).slice(0, 80))}`);
  // A plain object (V8 keeps a null-prototype one in dictionary mode, slower to read and copy).
  const headers: IncomingHttpHeaders = {};
  for (let i = 1; i < lines.length; i++) addField(headers, lines[i] as string);
  return {
    status: Number(status[2]),
    statusText: status[3] ?? "",
    minorVersion: Number(status[1]),
    headers,
    bytes: end + 4,
  };
}

/** Adds one `name: value` line to `headers` (shared with chunked trailers). */
export function addField(headers: IncomingHttpHeaders, line: string): void {
  const colon = line.indexOf(":");
  const name = colon > 0 ? line.slice(0, colon) : "";
  if (!TOKEN.test(name)) throw badResponse(`header line ${JSON.stringify(line.slice(0, 80))}`);
  const value = trimOws(line.slice(colon + 1));
  if (BAD_VALUE.test(value)) throw badResponse(`control character in header ${name}`);
  const key = name.toLowerCase();
  // No server field is named so; on a plain object it would be the prototype's setter.
  if (key === "__proto__") return;
  const seen = Object.hasOwn(headers, key) ? headers[key] : undefined;
  if (seen === undefined) headers[key] = value;
  else if (Array.isArray(seen)) seen.push(value);
  else headers[key] = [seen, value];
}

/** `value` without leading and trailing spaces and tabs (RFC 9110 §5.6.3's OWS, nothing else). */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === " " || value[start] === "\t")) start++;
  while (end > start && (value[end - 1] === " " || value[end - 1] === "\t")) end--;
  return value.slice(start, end);
}
