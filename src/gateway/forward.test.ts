import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connect, createServer as createNetServer } from "node:net";
import { after, describe, it } from "node:test";
import { Client, Pool } from "undici";
import { Http1Pool } from "../http1/pool.ts";
import { type ForwardOutcome, forward, type Upstream } from "./forward.ts";
import { StreamFlusher } from "./stream-flusher.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const servers: Server[] = [];
after(() => {
  for (const s of servers) s.closeAllConnections();
  for (const s of servers) s.close();
});

async function serve(handler: Handler): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

type UpstreamClient = "http1" | "undici";

/** The client's pool for `origin` (`http://127.0.0.1:port`). */
function poolFor(via: UpstreamClient, origin: string): Upstream {
  if (via === "undici") return new Pool(origin);
  const { hostname, port } = new URL(origin);
  const timeouts = { connectTimeoutMs: 2000, headersTimeoutMs: 10_000, bodyTimeoutMs: 10_000 };
  return new Http1Pool(hostname, Number(port), { ...timeouts, keepAliveMs: 30_000 });
}

/** A proxy whose only route forwards to `upstream`; outcomes are collected in order. */
async function proxyTo(
  via: UpstreamClient,
  upstream: string,
  firstBytes: string[] = [],
  flusher?: StreamFlusher,
) {
  const pool = poolFor(via, upstream);
  const outcomes: ForwardOutcome[] = [];
  let settled: (o: ForwardOutcome) => void = () => {};
  const url = await serve((req, res) => {
    const body = Buffer.from("{}");
    void forward(
      pool,
      {
        path: req.url ?? "/",
        headers: { "content-type": "application/json", "content-length": String(body.length) },
        body,
        requestId: "r1",
        endpointKey: "default/up",
        onFirstByte: () => firstBytes.push("first"),
        flusher,
      },
      res,
    ).then((o) => {
      outcomes.push(o);
      settled(o);
    });
  });
  const next = () => new Promise<ForwardOutcome>((resolve) => (settled = resolve));
  return { url, outcomes, next, pool };
}

const sseUsage = `data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}}\n\n`;

for (const via of ["http1", "undici"] as const) describeForward(via);

function describeForward(via: UpstreamClient): void {
  describe(`forward through ${via}`, () => {
    it("takes a draining server's 503 rejected-shutting-down as unreachable, writing nothing to the client", async () => {
      const upstream = await serve((req, res) => {
        const draining = req.url === "/draining";
        res.writeHead(503, {
          "content-type": "application/json",
          ...(draining ? { "x-llm-d-request-dropped-reason": "rejected-shutting-down" } : {}),
        });
        res.end('{"error":{"code":"shutting_down"}}');
      });
      const pool = poolFor(via, upstream);
      const outcomes: ForwardOutcome[] = [];
      const url = await serve((req, res) => {
        const body = Buffer.from("{}");
        const request = {
          path: req.url ?? "/",
          headers: {},
          body,
          requestId: "r",
          endpointKey: "default/up",
        };
        void forward(pool, { ...request, onFirstByte: () => {} }, res).then((o) => {
          outcomes.push(o);
          // The gateway would retry elsewhere; this proxy answers in its place.
          if (o.kind === "unreachable") res.end("retried elsewhere");
        });
      });
      const refused = await fetch(`${url}/draining`, { method: "POST" });
      assert.deepEqual([refused.status, await refused.text()], [200, "retried elsewhere"]);
      assert.equal(outcomes[0]?.kind, "unreachable");
      assert.equal(outcomes[0]?.kind === "unreachable" && outcomes[0].draining, true);
      const plain = await fetch(`${url}/other`, { method: "POST" });
      assert.equal(plain.status, 503, "any other 503 passes through");
      assert.match(await plain.text(), /shutting_down/);
      assert.equal(outcomes[1]?.kind, "done");
    });

    it("with a flusher, chunks held for the next tick still precede the error event of a failed stream", async () => {
      const upstream = await serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write('data: {"t":"a"}\n\n');
        setTimeout(() => {
          res.write('data: {"t":"b"}\n\n');
          res.write('data: {"t":"c"}\n\n');
          setTimeout(() => res.destroy(), 20);
        }, 20);
      });
      // A tick far longer than the stream: only the error path can write b and c out.
      const proxy = await proxyTo(via, upstream, [], new StreamFlusher(60_000));
      const outcome = proxy.next();
      const body = await (await fetch(`${proxy.url}/v1/completions`, { method: "POST" })).text();
      const events = body.split("\n\n").filter(Boolean);
      assert.deepEqual(events.slice(0, 3), ['data: {"t":"a"}', 'data: {"t":"b"}', 'data: {"t":"c"}']);
      assert.match(events[3] ?? "", /"upstream_failed"/);
      assert.equal((await outcome).kind, "done");
    });

    it("streams SSE through, reads the final usage chunk and reports the first byte once", async () => {
      const upstream = await serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
        res.write('data: {"choices":[{"delta":{"content":"b"}}]}\n\n');
        res.end(`${sseUsage}data: [DONE]\n\n`);
      });
      const firstBytes: string[] = [];
      const proxy = await proxyTo(via, upstream, firstBytes);
      const done = proxy.next();
      const response = await fetch(`${proxy.url}/v1/chat/completions`);
      const text = await response.text();
      assert.equal(response.headers.get("x-llmd-endpoint"), "default/up");
      assert.match(text, /"content":"a".*"content":"b".*\[DONE\]/s);
      assert.deepEqual(await done, {
        kind: "done",
        cause: "natural",
        status: 200,
        usage: { promptTokens: 9, completionTokens: 2, cachedTokens: 4 },
      });
      assert.deepEqual(firstBytes, ["first"]);
    });

    it("ends a stream whose upstream dies with an SSE error event", async () => {
      const upstream = await serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n', () => res.socket?.destroy());
      });
      const proxy = await proxyTo(via, upstream);
      const done = proxy.next();
      const text = await (await fetch(`${proxy.url}/v1/completions`)).text();
      assert.match(text, /data: \{"error":\{"message":"endpoint default\/up failed/);
      const outcome = await done;
      assert.equal(outcome.kind === "done" && outcome.cause, "error");
    });

    it("answers 502 JSON when a non-streaming upstream dies", async () => {
      const upstream = await serve((req) => req.socket.destroy());
      const proxy = await proxyTo(via, upstream);
      const response = await fetch(`${proxy.url}/v1/completions`);
      assert.equal(response.status, 502);
      const body = (await response.json()) as { error: { code: string; type: string } };
      assert.deepEqual([body.error.code, body.error.type], ["upstream_failed", "server_error"]);
    });

    it("reports an unreachable endpoint without touching the client response", async () => {
      const dead = await serve(() => {});
      const port = new URL(dead).port;
      await new Promise((resolve) => servers.pop()?.close(resolve));
      const proxy = await proxyTo(via, `http://127.0.0.1:${port}`);
      const done = proxy.next();
      const client = new AbortController();
      const request = fetch(`${proxy.url}/v1/completions`, { signal: client.signal });
      const outcome = await done;
      assert.equal(outcome.kind, "unreachable");
      client.abort();
      await request.catch(() => {});
    });

    it("aborts the upstream request when the client disconnects", async () => {
      let upstreamClosed!: () => void;
      const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
      const upstream = await serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write('data: {"choices":[]}\n\n');
        res.on("close", upstreamClosed);
      });
      const proxy = await proxyTo(via, upstream);
      const done = proxy.next();
      const controller = new AbortController();
      const response = await fetch(`${proxy.url}/v1/completions`, { signal: controller.signal });
      await response.body?.getReader().read();
      controller.abort();
      await closed;
      const outcome = await done;
      assert.equal(outcome.kind === "done" && outcome.cause, "client-disconnect");
    });

    it("frames a relayed stream as valid chunked HTTP/1.1, so the client's connection is reused", async () => {
      const upstream = await serve((_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write('data: {"t":"a"}\n\n');
        // Two events in one upstream read: coalesced into one frame by the flusher.
        res.write('data: {"t":"b"}\n\ndata: {"t":"c"}\n\n');
        setTimeout(() => res.end("data: [DONE]\n\n"), 10);
      });
      const proxy = await proxyTo(via, upstream, [], new StreamFlusher(0));
      const client = new Client(proxy.url, { pipelining: 1 });
      const sockets = new Set<unknown>();
      client.on("connect", (_origin, [c]) => sockets.add(c));
      try {
        for (let i = 0; i < 2; i++) {
          const { statusCode, body } = await client.request({
            path: "/v1/completions",
            method: "POST",
            body: "{}",
          });
          assert.equal(statusCode, 200);
          assert.equal(
            await body.text(),
            'data: {"t":"a"}\n\ndata: {"t":"b"}\n\ndata: {"t":"c"}\n\ndata: [DONE]\n\n',
          );
        }
        assert.equal(sockets.size, 1, "both responses on one kept-alive connection");
      } finally {
        await client.close();
      }
    });

    it("relays the model server's own chunk frames to a chunked client when the HTTP/1.1 client reads them", async () => {
      const upstream = createNetServer((socket) => {
        socket.once("data", () => {
          socket.write(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
          );
          // Zero-padded upper-case sizes and an extension: a re-framed chunk would not keep them.
          socket.write('00F\r\ndata: {"t":1}\n\n\r\n');
          setTimeout(() => socket.end('00F;x=y\r\ndata: {"t":2}\n\n\r\n0\r\n\r\n'), 10);
        });
      });
      upstream.listen(0, "127.0.0.1");
      await once(upstream, "listening");
      after(() => upstream.close());
      const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
      const proxy = await proxyTo(via, origin, [], new StreamFlusher(0));
      const raw = connect(Number(new URL(proxy.url).port), "127.0.0.1");
      raw.write("POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
      let wire = "";
      for await (const part of raw) wire += (part as Buffer).toString("latin1");
      const body = wire.slice(wire.indexOf("\r\n\r\n") + 4);
      const first = via === "http1" ? "00F" : "f";
      assert.equal(body, `${first}\r\ndata: {"t":1}\n\n\r\nf\r\ndata: {"t":2}\n\n\r\n0\r\n\r\n`);
    });

    it("resumes the upstream when a slow client's socket drains, delivering every byte", async () => {
      const chunk = Buffer.alloc(64 * 1024, "x");
      const total = 16 * 1024 * 1024;
      const upstream = await serve(async (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        for (let sent = 0; sent < total; sent += chunk.length)
          if (!res.write(chunk)) await once(res, "drain");
        res.end();
      });
      const proxy = await proxyTo(via, upstream, [], new StreamFlusher(0));
      const done = proxy.next();
      const response = await fetch(`${proxy.url}/v1/completions`, { method: "POST" });
      // Not reading for a while fills the proxy's socket to the client, which pauses the upstream.
      await new Promise((resolve) => setTimeout(resolve, 300));
      let received = 0;
      for await (const part of response.body as AsyncIterable<Uint8Array>) received += part.length;
      assert.equal(received, total);
      const outcome = await done;
      assert.equal(outcome.kind === "done" && outcome.cause, "natural");
    });

    it("pauses the upstream while the client does not read (no unbounded buffering)", async () => {
      const chunk = Buffer.alloc(64 * 1024, "x");
      let flushed = 0;
      let stop = false;
      const upstream = await serve(async (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        // Writes until the socket pushes back, counting what the proxy actually accepted.
        while (!stop && flushed < 256 * 1024 * 1024) {
          if (!res.write(chunk)) await once(res, "drain");
          flushed += chunk.length;
        }
        res.end();
      });
      const proxy = await proxyTo(via, upstream);
      const { port } = new URL(proxy.url);
      const socket = connect(Number(port), "127.0.0.1");
      socket.write("GET /v1/completions HTTP/1.1\r\nhost: x\r\n\r\n");
      socket.pause();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const stalledAt = flushed;
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.ok(stalledAt < 32 * 1024 * 1024, `upstream pushed ${stalledAt} bytes into a stalled client`);
      assert.equal(flushed, stalledAt, "upstream kept flowing while the client was not reading");
      stop = true;
      const done = proxy.next();
      socket.destroy();
      const outcome = await done;
      assert.equal(outcome.kind === "done" && outcome.cause, "client-disconnect");
    });
  });
}

describe("forward through http1, one client write per upstream read", () => {
  /**
   * The chunked body a raw client receives through a proxy (no flusher) from a model server that
   * writes each of `reads` in one socket write, the next only once the client got the previous
   * one (so no two of them reach the proxy in one read), then the last chunk.
   */
  async function relayed(reads: readonly string[]): Promise<string> {
    let next = (): void => {};
    const upstream = createNetServer((socket) => {
      socket.once("data", () => {
        socket.write(
          "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
        );
        const left = [...reads, "0\r\n\r\n"];
        next = () => {
          const read = left.shift();
          if (read !== undefined) socket.write(read);
        };
      });
    });
    upstream.listen(0, "127.0.0.1");
    await once(upstream, "listening");
    after(() => upstream.close());
    const proxy = await proxyTo("http1", `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`);
    const raw = connect(Number(new URL(proxy.url).port), "127.0.0.1");
    raw.write("POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    let wire = "";
    for await (const part of raw) {
      wire += (part as Buffer).toString("latin1");
      next();
    }
    return wire.slice(wire.indexOf("\r\n\r\n") + 4);
  }

  it("writes the chunk frames of one read as one frame, without a flusher", async () => {
    const a = 'data: {"t":1}\n\n';
    const b = 'data: {"t":2}\n\n';
    const body = await relayed([`f\r\n${a}\r\n`, `f\r\n${b}\r\nf\r\n${a}\r\n`]);
    assert.equal(body, `f\r\n${a}\r\n1e\r\n${b}${a}\r\n0\r\n\r\n`);
  });

  it("writes the piece of a frame split across reads at the end of each read", async () => {
    const body = await relayed(["f\r\ndata: ", '{"t":1}\n\n\r\n']);
    assert.equal(body, '6\r\ndata: \r\n9\r\n{"t":1}\n\n\r\n0\r\n\r\n');
  });
});
