import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ChunkedDecoder } from "./chunked-decoder.ts";
import { Http1Error } from "./errors.ts";

interface Decoded {
  data: string;
  frames: string[];
  /** Offset past the body's end in the last buffer, or -1. */
  end: number;
  trailers: Record<string, unknown>;
}

/** Decodes `parts` in order, as reads of one body. */
function decode(parts: readonly Buffer[]): Decoded {
  const decoder = new ChunkedDecoder();
  const data: Buffer[] = [];
  const frames: string[] = [];
  let end = -1;
  for (const part of parts) {
    assert.equal(end, -1, "bytes after the body's end");
    end = decoder.push(part, 0, (payload, frame) => {
      assert.ok(payload.length > 0, "empty payload");
      data.push(payload);
      if (frame) frames.push(frame.toString("latin1"));
      return true;
    });
  }
  return { data: Buffer.concat(data).toString("latin1"), frames, end, trailers: { ...decoder.trailers } };
}

/** `body` cut into reads at every pair of positions (three pieces), plus whole and one byte at a time. */
function splits(body: string): Buffer[][] {
  const bytes = Buffer.from(body, "latin1");
  const out: Buffer[][] = [[bytes], [...bytes].map((b) => Buffer.from([b]))];
  for (let a = 1; a < bytes.length; a++)
    for (let b = a; b < bytes.length; b++)
      out.push([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)].filter((p) => p.length > 0));
  return out;
}

const frame = (data: string) => `${Buffer.byteLength(data, "latin1").toString(16)}\r\n${data}\r\n`;

describe("ChunkedDecoder", () => {
  it("decodes a body split at every byte boundary the same way, with trailers and extensions", () => {
    const body = `${frame("data: a\n\n")}5;name=value\r\nhello\r\n${frame("x")}0;last\r\nx-trailer: t\r\nx-other:  o \r\n\r\n`;
    for (const parts of splits(body)) {
      const decoded = decode(parts);
      assert.equal(decoded.data, "data: a\n\nhellox");
      assert.equal(decoded.end, (parts.at(-1) as Buffer).length);
      assert.deepEqual(decoded.trailers, { "x-trailer": "t", "x-other": "o" });
    }
  });

  it("hands over whole frames without extensions as they came, and the rest as data only", () => {
    const whole = decode([Buffer.from(`${frame("ab")}${frame("cde")}3;e\r\nfgh\r\n0\r\n\r\n`)]);
    assert.deepEqual(whole.frames, [frame("ab"), frame("cde")]);
    assert.equal(whole.data, "abcdefgh");
    const split = decode([Buffer.from(`${frame("ab")}4\r\ncd`), Buffer.from(`ef\r\n${frame("g")}0\r\n\r\n`)]);
    assert.deepEqual(split.frames, [frame("ab"), frame("g")]);
    assert.equal(split.data, "abcdefg");
  });

  it("reports where the body ended, so bytes after it are seen", () => {
    const buf = Buffer.from(`${frame("a")}0\r\n\r\nHTTP/1.1 200 OK`);
    assert.equal(decode([buf]).end, buf.length - "HTTP/1.1 200 OK".length);
  });

  it("passes a huge chunk through in the pieces it arrives in", () => {
    const size = 5 * 1024 * 1024;
    const head = Buffer.from(`${size.toString(16).toUpperCase()}\r\n`);
    const data = Buffer.alloc(size, "z");
    const tail = Buffer.from("\r\n0\r\n\r\n");
    const pieces = [Buffer.concat([head, data.subarray(0, 1000)])];
    for (let at = 1000; at < size; at += 65536) pieces.push(data.subarray(at, Math.min(size, at + 65536)));
    pieces.push(tail);
    const decoded = decode(pieces);
    assert.equal(decoded.data.length, size);
    assert.deepEqual(decoded.frames, []);
  });

  it("stops when the receiver says so", () => {
    const decoder = new ChunkedDecoder();
    let calls = 0;
    const at = decoder.push(Buffer.from(`${frame("a")}${frame("b")}0\r\n\r\n`), 0, () => ++calls < 1);
    assert.deepEqual([at, calls], [-2, 1]);
  });

  for (const [name, body] of [
    ["a size that is not hex", "zz\r\nab\r\n0\r\n\r\n"],
    ["an empty size line", "\r\nab\r\n0\r\n\r\n"],
    ["data longer than its size", "2\r\nabc\r\n0\r\n\r\n"],
    ["a size line ended by a bare LF", "2\nab\r\n0\r\n\r\n"],
    ["data ended by a bare LF", "2\r\nab\n0\r\n\r\n"],
    ["a size past 2^52", "10000000000000\r\n"],
    ["a trailer line without a colon", "0\r\nbroken\r\n\r\n"],
    ["a bare LF in the trailers", "0\r\nx: a\nb\r\n\r\n"],
    ["an oversized extension", `1;${"e".repeat(5000)}\r\na\r\n0\r\n\r\n`],
    ["oversized trailers", `0\r\n${"x-t: 1234567890\r\n".repeat(2000)}\r\n`],
  ] as const) {
    it(`rejects ${name} at every split with a clean error`, () => {
      const cuts = body.length > 200 ? [[Buffer.from(body)]] : splits(body);
      for (const parts of cuts) {
        assert.throws(
          () => decode(parts),
          (err) => err instanceof Http1Error && err.code === "HTTP1_BAD_RESPONSE",
        );
      }
    });
  }
});
