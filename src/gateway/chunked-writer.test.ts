import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { describe, it } from "node:test";
import { CachedTokensSink } from "./cached-tokens-sink.ts";
import { type ChunkedWriter, chunkedWriterFor } from "./chunked-writer.ts";

/** What a raw socket receives for one request line when the server streams `a` then `b` through the writer. */
async function exchange(requestLine: string, pick: (res: ServerResponse) => ChunkedWriter | undefined) {
  let chosen: ChunkedWriter | undefined;
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
    chosen = pick(res);
    const [a, b] = [Buffer.from("data: a\n\n"), Buffer.from("data: b\n\n")];
    if (chosen) chosen.write([a, b], a.length + b.length);
    else res.write(Buffer.concat([a, b]));
    res.end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
  socket.end(`${requestLine}\r\nhost: x\r\nconnection: close\r\n\r\n`);
  let raw = "";
  for await (const part of socket) raw += part;
  server.close();
  return { raw: raw.slice(raw.indexOf("\r\n\r\n") + 4), chosen };
}

describe("chunkedWriterFor", () => {
  it("frames the chunks of one write as one HTTP/1.1 chunk, before node:http's last chunk", async () => {
    const { raw, chosen } = await exchange("GET / HTTP/1.1", chunkedWriterFor);
    assert.ok(chosen, "a plain HTTP/1.1 response gets a writer");
    assert.equal(raw, "12\r\ndata: a\n\ndata: b\n\n\r\n0\r\n\r\n");
  });

  it("gives no writer where node:http frames no chunks (HTTP/1.0) or the sink translates", async () => {
    const { raw, chosen } = await exchange("GET / HTTP/1.0", chunkedWriterFor);
    assert.equal(chosen, undefined);
    assert.equal(raw, "data: a\n\ndata: b\n\n");
    const translated = await exchange("GET / HTTP/1.1", (res) =>
      chunkedWriterFor(new CachedTokensSink(res, 0)),
    );
    assert.equal(translated.chosen, undefined);
  });
});
