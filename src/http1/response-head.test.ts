import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Http1Error } from "./errors.ts";
import { MAX_HEAD_BYTES, parseResponseHead } from "./response-head.ts";

const HEAD =
  "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nset-cookie: a=1\r\nSet-Cookie: b=2\r\nx-e:\r\n\r\n";

describe("parseResponseHead", () => {
  it("waits for every prefix of a head and parses the whole one, body bytes after it untouched", () => {
    const bytes = Buffer.from(`${HEAD}data`);
    for (let cut = 0; cut < HEAD.length; cut++)
      assert.equal(parseResponseHead(bytes.subarray(0, cut)), undefined);
    const head = parseResponseHead(bytes);
    assert.deepEqual(
      { ...head, headers: { ...head?.headers } },
      {
        status: 200,
        statusText: "OK",
        minorVersion: 1,
        headers: { "content-type": "text/event-stream", "set-cookie": ["a=1", "b=2"], "x-e": "" },
        bytes: HEAD.length,
      },
    );
  });

  it("reads HTTP/1.0, an empty reason phrase and trims only spaces and tabs around values", () => {
    const head = parseResponseHead(Buffer.from("HTTP/1.0 204\r\nx-a: \t v\u00a0 \r\n\r\n", "latin1"));
    assert.deepEqual(
      [head?.minorVersion, head?.status, head?.statusText, head?.headers["x-a"]],
      [0, 204, "", "v\u00a0"],
    );
  });

  it("keeps fields named like Object prototype keys as plain fields, and drops __proto__", () => {
    const text = "HTTP/1.1 200 OK\r\n__proto__: x\r\nconstructor: y\r\ntoString: z\r\ntoString: w\r\n\r\n";
    const head = parseResponseHead(Buffer.from(text));
    assert.deepEqual(Object.entries(head?.headers ?? {}), [
      ["constructor", "y"],
      ["tostring", ["z", "w"]],
    ]);
    assert.equal(Object.getPrototypeOf(head?.headers), Object.prototype);
  });

  for (const [name, text] of [
    ["HTTP/2", "HTTP/2 200 OK\r\n\r\n"],
    ["a two-digit status", "HTTP/1.1 20 OK\r\n\r\n"],
    ["a status line ended by a bare LF", "HTTP/1.1 200 OK\nx: 1\r\n\r\n"],
    ["a space before the colon", "HTTP/1.1 200 OK\r\nx-a : 1\r\n\r\n"],
    ["an empty header name", "HTTP/1.1 200 OK\r\n: 1\r\n\r\n"],
    ["a NUL in a value", "HTTP/1.1 200 OK\r\nx-a: 1\u00002\r\n\r\n"],
    ["a head over the limit", `HTTP/1.1 200 OK\r\nx: ${"a".repeat(MAX_HEAD_BYTES)}\r\n\r\n`],
    ["an endless head", `HTTP/1.1 200 OK\r\nx: ${"a".repeat(MAX_HEAD_BYTES)}`],
  ] as const) {
    it(`rejects ${name}`, () => {
      assert.throws(
        () => parseResponseHead(Buffer.from(text, "latin1")),
        (err) => err instanceof Http1Error && err.code === "HTTP1_BAD_RESPONSE",
      );
    });
  }
});
