/**
 * The bytes of one request: request line, header fields, body. Invalid methods, targets, names
 * and values are refused before a byte is written (node:http's rules), so a header cannot smuggle
 * a second request.
 */
import { Http1Error } from "./errors.ts";
import type { Http1Request } from "./exchange.ts";
import { hasBadValueChar, isToken } from "./field-syntax.ts";

const BAD_TARGET = /[^\u0021-\u00ff]/;

/** Fields the client owns: framing and connection management are the connection's. */
const OWN_FIELDS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
]);

/** Bodies above this are written after the head, not copied into one buffer with it. */
const COPY_LIMIT = 16 * 1024;

/** The request's bytes for `host` (one buffer, or head and body); throws `HTTP1_BAD_REQUEST`. */
export function requestBytes(host: string, request: Http1Request): Buffer[] {
  const { method, path, headers, body } = request;
  if (!isToken(method)) throw badRequest(`method ${JSON.stringify(method)}`);
  if (path.length === 0 || BAD_TARGET.test(path)) throw badRequest(`path ${JSON.stringify(path)}`);
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const name in headers) {
    const value = headers[name] as string;
    if (!isToken(name)) throw badRequest(`header name ${JSON.stringify(name)}`);
    if (hasBadValueChar(value)) throw badRequest(`value of header ${name}`);
    if (!OWN_FIELDS.has(name.toLowerCase())) head += `${name}: ${value}\r\n`;
  }
  const bytes = body?.length ?? 0;
  if (body || (method !== "GET" && method !== "HEAD")) head += `content-length: ${bytes}\r\n`;
  head += "\r\n";
  if (bytes > COPY_LIMIT) return [Buffer.from(head, "latin1"), body as Buffer];
  const out = Buffer.allocUnsafe(head.length + bytes);
  out.write(head, 0, "latin1");
  body?.copy(out, head.length);
  return [out];
}

function badRequest(detail: string): Http1Error {
  return new Http1Error("HTTP1_BAD_REQUEST", `cannot send the request: invalid ${detail}`);
}
