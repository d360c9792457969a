/**
 * Parses an HTTP/1.1 response head (RFC 9112 §4–5): the status line and header fields up to the
 * empty line. Strict where leniency would let a malformed answer be misread: lines end in CRLF,
 * no obsolete line folding, header names are tokens, values hold no control characters.
 */
import type { IncomingHttpHeaders } from "node:http";
import { badResponse } from "./errors.ts";
import { hasBadValueChar, isToken } from "./field-syntax.ts";

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
/** The head is first looked for in this many leading bytes, decoded once (a head is usually far shorter). */
const FIRST_LOOK_BYTES = 1024;

/**
 * The head at the start of `buf`; undefined while its end is not in `buf` yet. Throws an
 * `HTTP1_BAD_RESPONSE` {@link Http1Error} for a malformed head or one over {@link MAX_HEAD_BYTES}.
 */
export function parseResponseHead(buf: Buffer): ResponseHead | undefined {
  let text = buf.toString("latin1", 0, Math.min(buf.length, FIRST_LOOK_BYTES));
  let end = text.indexOf("\r\n\r\n");
  if (end < 0 && buf.length > FIRST_LOOK_BYTES) {
    end = buf.indexOf(HEAD_END);
    if (end >= 0 && end + 4 <= MAX_HEAD_BYTES) text = buf.toString("latin1", 0, end);
  }
  if (end < 0) {
    if (buf.length > MAX_HEAD_BYTES) throw badResponse(`head over ${MAX_HEAD_BYTES} bytes`);
    return undefined;
  }
  if (end + 4 > MAX_HEAD_BYTES) throw badResponse(`head over ${MAX_HEAD_BYTES} bytes`);
  let lineEnd = lineEndIn(text, 0, end);
  const statusLine = text.slice(0, lineEnd);
  const status = STATUS_LINE.exec(statusLine);
  if (!status) throw badResponse(`status line ${JSON.stringify(statusLine.slice(0, 80))}`);
  // A plain object (V8 keeps a null-prototype one in dictionary mode, slower to read and copy).
  const headers: IncomingHttpHeaders = {};
  while (lineEnd < end) {
    const next = lineEndIn(text, lineEnd + 2, end);
    addField(headers, text.slice(lineEnd + 2, next));
    lineEnd = next;
  }
  return {
    status: Number(status[2]),
    statusText: status[3] ?? "",
    minorVersion: Number(status[1]),
    headers,
    bytes: end + 4,
  };
}

/** Where the line starting at `from` ends (its CR), at most at `end`. */
function lineEndIn(text: string, from: number, end: number): number {
  const at = text.indexOf("\r\n", from);
  return at < 0 || at > end ? end : at;
}

/** Lower-cased field names seen, by their spelling on the wire (servers repeat the same few). */
const lowerNames = new Map<string, string>();
const MAX_LOWER_NAMES = 256;

function lowerName(name: string): string {
  let lower = lowerNames.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerNames.size < MAX_LOWER_NAMES) lowerNames.set(name, lower);
  }
  return lower;
}

/** Adds one `name: value` line to `headers` (shared with chunked trailers). */
export function addField(headers: IncomingHttpHeaders, line: string): void {
  const colon = line.indexOf(":");
  const name = colon > 0 ? line.slice(0, colon) : "";
  if (!isToken(name)) throw badResponse(`header line ${JSON.stringify(line.slice(0, 80))}`);
  const value = trimOws(line, colon + 1);
  if (hasBadValueChar(value)) throw badResponse(`control character in header ${name}`);
  const key = lowerName(name);
  // No server field is named so; on a plain object it would be the prototype's setter.
  if (key === "__proto__") return;
  const seen = Object.hasOwn(headers, key) ? headers[key] : undefined;
  if (seen === undefined) headers[key] = value;
  else if (Array.isArray(seen)) seen.push(value);
  else headers[key] = [seen, value];
}

/** `line` from `start` on, without leading and trailing spaces and tabs (RFC 9110 §5.6.3's OWS, nothing else). */
function trimOws(line: string, start: number): string {
  let from = start;
  let end = line.length;
  while (from < end && isOws(line.charCodeAt(from))) from++;
  while (end > from && isOws(line.charCodeAt(end - 1))) end--;
  return line.slice(from, end);
}

function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}
