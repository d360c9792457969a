import assert from "node:assert/strict";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { HttpFetcher } from "../../src/endpoints/http-fetcher.ts";

/** Writes `€ 1` with the euro sign's three bytes split over two writes, flushed apart. */
function writeSplitEuro(res: ServerResponse): void {
  const euro = Buffer.from("€ 1");
  res.write(euro.subarray(0, 1));
  setTimeout(() => res.end(euro.subarray(1)), 20);
}

/** `/drip` sends its headers at once, then one byte every 20 ms for 1 s: no single wait is long. */
function startServer(): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === "/page") return res.end("a 1\n");
    if (req.url === "/chunks") return writeSplitEuro(res);
    if (req.url !== "/drip") return res.writeHead(404).end("no");
    res.writeHead(200, { "content-type": "text/plain" });
    res.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      if (++sent === 50 || res.destroyed) {
        clearInterval(timer);
        res.end();
      } else res.write("x");
    }, 20);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

describe("HttpFetcher over real HTTP", () => {
  let server: Server;
  let origin: string;
  const fetcher = new HttpFetcher();
  before(async () => {
    server = await startServer();
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await fetcher.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("returns the body of a 2xx and the status of anything else", async () => {
    assert.deepEqual(await fetcher.getText(origin, "/page"), { ok: true, body: "a 1\n" });
    assert.deepEqual(await fetcher.getText(origin, "/missing"), {
      ok: false,
      status: 404,
      error: "HTTP 404",
    });
  });

  it("decodes a body that arrives in several chunks once, and refuses one above the size cap", async () => {
    assert.deepEqual(await fetcher.getText(origin, "/chunks"), { ok: true, body: "€ 1" });
    const capped = new HttpFetcher({ maxBodyBytes: 2 });
    const outcome = await capped.getText(origin, "/chunks");
    await capped.close();
    assert.equal(outcome.ok, false);
    assert.match(outcome.ok ? "" : outcome.error, /response body over 2 bytes/);
  });

  it("keeps one connection for GETs one after another (a scrape every 50 ms opens none)", async () => {
    let connections = 0;
    const count = () => connections++;
    server.on("connection", count);
    const own = new HttpFetcher();
    try {
      for (let i = 0; i < 5; i++)
        assert.deepEqual(await own.getText(origin, "/page"), { ok: true, body: "a 1\n" });
      assert.equal(connections, 1);
    } finally {
      server.off("connection", count);
      await own.close();
    }
  });

  it("bounds the whole request, not only each wait, and the connection pool still serves after", async () => {
    const bounded = new HttpFetcher({ timeoutMs: 300 });
    try {
      const outcome = await bounded.getText(origin, "/drip");
      assert.equal(outcome.ok, false);
      assert.match(outcome.ok ? "" : outcome.error, /timeout/);
      assert.deepEqual(await bounded.getText(origin, "/page"), { ok: true, body: "a 1\n" });
    } finally {
      await bounded.close();
    }
  });
});
