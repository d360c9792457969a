import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import type { EndpointMetadata } from "../endpoints/endpoint.ts";
import type { Http1Pool } from "../http1/pool.ts";
import { type UpstreamOptions, Upstreams } from "./upstreams.ts";

/** A model server that holds every request open until released, counting how many it holds. */
async function holdingServer() {
  const held: ServerResponse[] = [];
  let releasing = false;
  const server = createServer((_req, res) => {
    if (releasing) res.end("ok");
    else held.push(res);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const metadata: EndpointMetadata = {
    key: `default/127.0.0.1:${port}`,
    name: "sim",
    namespace: "default",
    address: "127.0.0.1",
    port,
    labels: {},
  };
  return {
    metadata,
    held,
    /** Answers the held requests and every later one. */
    release() {
      releasing = true;
      for (const res of held) res.end("ok");
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** Sends one request through `pool`; resolves at the end of its answer. */
function answered(pool: Http1Pool): Promise<void> {
  return new Promise((resolve, reject) =>
    pool.dispatch(
      { path: "/v1/completions", method: "POST", headers: {}, body: Buffer.from("{}") },
      { onResponseEnd: () => resolve(), onResponseError: (_c, error) => reject(error) },
    ),
  );
}

/** Sends `count` requests at once and reports how many the server holds once arrivals stop. */
async function concurrentAtServer(count: number, options: UpstreamOptions): Promise<number> {
  const upstream = await holdingServer();
  const upstreams = new Upstreams(options);
  const pool = upstreams.get(upstream.metadata);
  const responses = Array.from({ length: count }, () => answered(pool));
  // Arrivals have stopped once the count holds still for 200 ms (after the first one, which a
  // loaded machine may take longer than that to connect).
  const deadline = Date.now() + 10_000;
  let seen = -1;
  while ((upstream.held.length === 0 || upstream.held.length !== seen) && upstream.held.length < count) {
    if (Date.now() > deadline) break;
    seen = upstream.held.length;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const reached = upstream.held.length;
  upstream.release();
  await Promise.all(responses);
  await upstreams.close();
  await upstream.close();
  return reached;
}

test("every dispatched request reaches the model server, beyond vLLM's 256 running sequences", async () => {
  // Requests held back in the router's pool would be invisible to num_requests_waiting.
  assert.equal(await concurrentAtServer(300, {}), 300);
});

test("an explicit per-endpoint connection cap still bounds concurrency at the server", async () => {
  assert.equal(await concurrentAtServer(12, { connectionsPerEndpoint: 4 }), 4);
});
