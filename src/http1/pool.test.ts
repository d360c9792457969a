import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Server, type Socket } from "node:net";
import { after, describe, it } from "node:test";
import type { IncomingHttpHeaders } from "node:http";
import type { ExchangeController, Http1Request } from "./exchange.ts";
import { type Http1PoolOptions, Http1Pool } from "./pool.ts";

const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

const OPTIONS: Http1PoolOptions = {
  connectTimeoutMs: 2000,
  headersTimeoutMs: 10_000,
  bodyTimeoutMs: 10_000,
  keepAliveMs: 30_000,
};

interface Served {
  port: number;
  /** Every connection the server accepted, in order. */
  sockets: Socket[];
}

/** A node:http server on loopback. */
async function httpServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Served> {
  const server = createServer(handler);
  const sockets: Socket[] = [];
  server.on("connection", (s) => sockets.push(s));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  after(() => server.closeAllConnections());
  servers.push(server);
  return { port: (server.address() as AddressInfo).port, sockets };
}

/** A raw TCP server: `onRequest` gets each request head's bytes (they end in an empty line) and the socket. */
async function rawServer(onRequest: (socket: Socket, head: string, index: number) => void): Promise<Served> {
  const sockets: Socket[] = [];
  let index = 0;
  const server = createNetServer((socket) => {
    sockets.push(socket);
    let pending = "";
    socket.on("data", (chunk) => {
      pending += chunk.toString("latin1");
      for (let end = pending.indexOf("\r\n\r\n"); end >= 0; end = pending.indexOf("\r\n\r\n")) {
        const head = pending.slice(0, end + 4);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) return;
        pending = pending.slice(end + 4 + length);
        onRequest(socket, head, index++);
      }
    });
    socket.on("error", () => {});
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  servers.push(server);
  after(() => {
    for (const s of sockets) s.destroy();
  });
  return { port: (server.address() as AddressInfo).port, sockets };
}

interface Result {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  frames: string[];
  trailers: IncomingHttpHeaders;
  error?: Error & { code?: string };
}

interface SendOptions {
  /** Take whole chunk frames (`onResponseFrame`). */
  frames?: boolean;
  /** Pause at the first body piece for this long. */
  pauseMs?: number;
  /** Called with the controller at the first body piece. */
  atFirstData?: (controller: ExchangeController) => void;
}

const POST: Http1Request = { method: "POST", path: "/v1/completions", headers: {}, body: Buffer.from("{}") };

function send(pool: Http1Pool, request: Http1Request = POST, options: SendOptions = {}): Promise<Result> {
  return new Promise((resolve) => {
    const result: Result = { status: 0, headers: {}, body: "", frames: [], trailers: {} };
    const pieces: Buffer[] = [];
    let first = true;
    const onPiece = (controller: ExchangeController, payload: Buffer) => {
      pieces.push(payload);
      if (!first) return;
      first = false;
      options.atFirstData?.(controller);
      if (options.pauseMs === undefined) return;
      controller.pause();
      setTimeout(() => controller.resume(), options.pauseMs);
    };
    pool.dispatch(request, {
      onResponseStart: (_c, status, headers) => Object.assign(result, { status, headers }),
      onResponseData: onPiece,
      ...(options.frames
        ? {
            onResponseFrame: (c: ExchangeController, payload: Buffer, frame: Buffer) => {
              result.frames.push(frame.toString("latin1"));
              onPiece(c, payload);
            },
          }
        : {}),
      onResponseEnd: (_c, trailers) => {
        resolve({ ...result, body: Buffer.concat(pieces).toString("latin1"), trailers: { ...trailers } });
      },
      onResponseError: (_c, error) => resolve({ ...result, body: Buffer.concat(pieces).toString(), error }),
    });
  });
}

const ok = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;

describe("Http1Pool", () => {
  it("reuses one connection for requests sent one after another, and opens another for concurrent ones", async () => {
    const server = await httpServer((req, res) => {
      req.resume();
      req.on("end", () => res.end(`${req.method} ${req.url} ${req.headers.host}`));
    });
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    for (let i = 0; i < 3; i++) {
      const result = await send(pool);
      assert.equal(result.body, `POST /v1/completions 127.0.0.1:${server.port}`);
    }
    assert.equal(server.sockets.length, 1);
    await Promise.all([send(pool), send(pool)]);
    assert.equal(server.sockets.length, 2, "never two requests on one connection at once");
    pool.close();
  });

  it("passes SSE chunk frames through whole and ends on the last chunk, with trailers", async () => {
    const server = await rawServer((socket) => {
      socket.write(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
      );
      socket.write("9\r\ndata: a\n\n\r\n");
      setTimeout(() => socket.write("9\r\ndata: b\n\n\r\n0\r\nx-t: 1\r\n\r\n"), 5);
    });
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    const result = await send(pool, POST, { frames: true });
    assert.equal(result.body, "data: a\n\ndata: b\n\n");
    assert.deepEqual(result.frames, ["9\r\ndata: a\n\n\r\n", "9\r\ndata: b\n\n\r\n"]);
    assert.deepEqual(result.trailers, { "x-t": "1" });
    assert.equal((await send(pool)).body, "data: a\n\ndata: b\n\n", "the connection is reused");
    assert.equal(server.sockets.length, 1);
    pool.close();
  });

  it("skips 1xx answers and reads a head split across reads", async () => {
    const response = `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n${ok("done", "x-a: 1\r\nx-a: 2\r\n")}`;
    const cuts = [1, 20, 26, 27, 60, 70, response.length - 2];
    const server = await rawServer((socket) => {
      let from = 0;
      const next = (i: number) => {
        const to = cuts[i] ?? response.length;
        socket.write(response.slice(from, to));
        from = to;
        if (to < response.length) setTimeout(() => next(i + 1), 2);
      };
      next(0);
    });
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    const result = await send(pool);
    assert.deepEqual([result.status, result.body, result.headers["x-a"]], [200, "done", ["1", "2"]]);
    pool.close();
  });

  it("reads a body without length or chunking to the close, and does not reuse that connection", async () => {
    const server = await rawServer((socket) => socket.end("HTTP/1.1 200 OK\r\n\r\nuntil the end"));
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    assert.equal((await send(pool)).body, "until the end");
    assert.equal((await send(pool)).body, "until the end");
    assert.equal(server.sockets.length, 2);
    pool.close();
  });

  it("reads no body for HEAD, 204 and 304, and reuses the connection after them", async () => {
    const server = await httpServer((req, res) => {
      req.resume();
      if (req.method === "HEAD") res.writeHead(200, { "content-length": "100" }).end();
      else if (req.url === "/204") res.writeHead(204).end();
      else if (req.url === "/304") res.writeHead(304, { "content-length": "100" }).end();
      else res.end("body");
    });
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    const head = await send(pool, { method: "HEAD", path: "/", headers: {} });
    assert.deepEqual([head.status, head.body], [200, ""]);
    assert.equal((await send(pool, { ...POST, path: "/204" })).status, 204);
    assert.equal((await send(pool, { method: "GET", path: "/304", headers: {} })).status, 304);
    assert.equal((await send(pool)).body, "body");
    assert.equal(server.sockets.length, 1);
    pool.close();
  });

  it("does not reuse a connection after HTTP/1.0, connection: close, or bytes past the response", async () => {
    const answers = [
      "HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok",
      ok("ok", "connection: close\r\n"),
      `${ok("ok")}HTTP/1.1 200 OK\r\n`,
      ok("ok"),
    ];
    const server = await rawServer((socket, _head, i) => socket.write(answers[i] as string));
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    for (let i = 0; i < 4; i++) assert.equal((await send(pool)).body, "ok");
    assert.equal(server.sockets.length, 4);
    pool.close();
  });

  it("opens a new connection when the server closed the idle one between requests", async () => {
    const server = await rawServer((socket) => {
      socket.write(ok("ok"));
      setTimeout(() => socket.end(), 20);
    });
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    assert.equal((await send(pool)).body, "ok");
    await once(server.sockets[0] as Socket, "close");
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(pool.size, 0, "the closed connection left the pool");
    const again = await send(pool);
    assert.deepEqual([again.body, again.error], ["ok", undefined]);
    pool.close();
  });

  it("never reuses a connection past the server's keep-alive timeout hint less a second", async () => {
    const server = await rawServer((socket) => socket.write(ok("ok", "keep-alive: timeout=1\r\n")));
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    await send(pool);
    await send(pool);
    assert.equal(server.sockets.length, 2);
    pool.close();
  });

  for (const [name, answer] of [
    ["a garbage status line", "HTTP/1.1 OK\r\n\r\n"],
    ["a header line without a colon", "HTTP/1.1 200 OK\r\nbroken\r\n\r\n"],
    ["an obsolete folded header", "HTTP/1.1 200 OK\r\nx-a: 1\r\n  folded\r\n\r\n"],
    ["a control character in a value", "HTTP/1.1 200 OK\r\nx-a: a\u0001b\r\n\r\n"],
    ["conflicting content lengths", "HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok"],
    ["a negative content length", "HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n"],
    ["a 101 nobody asked for", "HTTP/1.1 101 Switching Protocols\r\nupgrade: h2c\r\n\r\n"],
    ["a head over 64 KiB", `HTTP/1.1 200 OK\r\nx-big: ${"a".repeat(70_000)}\r\n\r\n`],
    ["broken chunk framing", "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabcd\r\n"],
    ["not HTTP at all", "SSH-2.0-OpenSSH_9.6\r\n\r\n"],
  ] as const) {
    it(`fails cleanly on ${name} and closes that connection`, async () => {
      const server = await rawServer((socket) => socket.write(answer));
      const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
      const result = await send(pool);
      assert.equal(result.error?.code, "HTTP1_BAD_RESPONSE", String(result.error));
      await once(server.sockets[0] as Socket, "close");
      pool.close();
    });
  }

  it("fails with HTTP1_CLOSED when the server dies mid-body, after the data it sent", async () => {
    const server = await rawServer((socket) =>
      socket.end("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n"),
    );
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    const result = await send(pool);
    assert.deepEqual([result.body, result.error?.code], ["hello", "HTTP1_CLOSED"]);
    pool.close();
  });

  it("reports a refused connection with node's code", async () => {
    const server = await rawServer(() => {});
    const port = server.port;
    await new Promise((resolve) => servers.pop()?.close(resolve));
    const pool = new Http1Pool("127.0.0.1", port, OPTIONS);
    assert.equal((await send(pool)).error?.code, "ECONNREFUSED");
  });

  it("times out a missing head, and a silent body, closing the connection", async () => {
    const silent = await rawServer(() => {});
    const fast = { ...OPTIONS, headersTimeoutMs: 100, bodyTimeoutMs: 100 };
    const pool = new Http1Pool("127.0.0.1", silent.port, fast);
    assert.equal((await send(pool)).error?.code, "HTTP1_HEADERS_TIMEOUT");
    await once(silent.sockets[0] as Socket, "close");
    const stalled = await rawServer((socket) =>
      socket.write("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc"),
    );
    const stalledPool = new Http1Pool("127.0.0.1", stalled.port, fast);
    const result = await send(stalledPool);
    assert.deepEqual([result.body, result.error?.code], ["abc", "HTTP1_BODY_TIMEOUT"]);
  });

  it("does not count the time its reader kept it paused as the server's silence", async () => {
    const server = await rawServer((socket) => {
      socket.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\na\r\n");
      setTimeout(() => socket.write("1\r\nb\r\n0\r\n\r\n"), 10);
    });
    const pool = new Http1Pool("127.0.0.1", server.port, { ...OPTIONS, bodyTimeoutMs: 100 });
    const result = await send(pool, POST, { pauseMs: 400 });
    assert.deepEqual([result.body, result.error], ["ab", undefined]);
    pool.close();
  });

  it("aborting closes the connection, so the server sees the request cancelled", async () => {
    const server = await httpServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: a\n\n");
    });
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    const reason = new Error("client gone");
    const result = await send(pool, POST, { atFirstData: (c) => c.abort(reason) });
    assert.equal(result.error, reason);
    await once(server.sockets[0] as Socket, "close");
    assert.equal(pool.size, 0);
  });

  it("refuses a header that would split the request, writing nothing", async () => {
    const server = await rawServer(() => {});
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    const result = await send(pool, { ...POST, headers: { "x-a": "1\r\nx-injected: 2" } });
    assert.equal(result.error?.code, "HTTP1_BAD_REQUEST");
    assert.equal(server.sockets.length, 0);
    pool.close();
  });

  it("writes its own framing fields, not the caller's", async () => {
    let seen = "";
    const server = await rawServer((socket, head) => {
      seen = head;
      socket.write(ok("ok"));
    });
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    await send(pool, {
      ...POST,
      headers: { "content-length": "99", connection: "close", "transfer-encoding": "chunked", "x-id": "r1" },
    });
    assert.equal(
      seen,
      `POST /v1/completions HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\nx-id: r1\r\ncontent-length: 2\r\n\r\n`,
    );
    pool.close();
  });

  it("a large body is sent whole", async () => {
    const server = await httpServer(async (req, res) => {
      let bytes = 0;
      for await (const part of req) bytes += (part as Buffer).length;
      res.end(String(bytes));
    });
    const pool = new Http1Pool("127.0.0.1", server.port, OPTIONS);
    const body = Buffer.alloc(800 * 1024, "p");
    assert.equal((await send(pool, { ...POST, body })).body, String(body.length));
    pool.close();
  });

  it("a connection handed to a waiting exchange reads again after its last reader paused it", async () => {
    const server = await rawServer((socket) => socket.write(ok("ok")));
    const pool = new Http1Pool("127.0.0.1", server.port, { ...OPTIONS, connections: 1 });
    const [first, second] = await Promise.all([
      send(pool, POST, { atFirstData: (c) => c.pause() }),
      send(pool),
    ]);
    assert.deepEqual([first.body, second.body], ["ok", "ok"]);
    assert.equal(server.sockets.length, 1);
    pool.close();
  });

  it("fails running and waiting exchanges when closed", async () => {
    const server = await rawServer(() => {});
    const pool = new Http1Pool("127.0.0.1", server.port, { ...OPTIONS, connections: 1 });
    const running = send(pool);
    const waiting = send(pool);
    await new Promise((resolve) => setTimeout(resolve, 50));
    pool.close();
    const codes = (await Promise.all([running, waiting])).map((r) => r.error?.code);
    assert.deepEqual(codes, ["HTTP1_POOL_CLOSED", "HTTP1_POOL_CLOSED"]);
  });
});
