/**
 * llm-d's header contract between plugins and the gateway: headers a PreRequest plugin leaves in
 * `ctx.state` under `upstream-headers` reach the model server, those under `response-headers` reach
 * the client; neither may override the proxy's own hop-by-hop or length headers.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { type Endpoint, emptyMetrics } from "../../src/endpoints/endpoint.ts";
import type { Router } from "../../src/gateway/router.ts";
import { type Gateway, startGateway } from "../../src/gateway/server.ts";
import type { GatewayPool } from "../../src/gateway/types.ts";
import type { RequestScheduler, SchedulingResult } from "../../src/scheduler/framework/types.ts";
import {
  RESPONSE_HEADERS_STATE_KEY,
  UPSTREAM_HEADERS_STATE_KEY,
} from "../../src/scheduler/framework/data-keys.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, routerFor, startSims } from "./harness.ts";

/** Answers with the request headers it received, as JSON. */
async function echoServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const body = JSON.stringify({
        headers: req.headers,
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      });
      res.writeHead(200, { "content-type": "application/json" }).end(body);
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, port: (server.address() as AddressInfo).port };
}

function endpointAt(port: number): Endpoint {
  const metadata = {
    key: "default/echo",
    name: "echo",
    namespace: "default",
    address: "127.0.0.1",
    port,
    labels: {},
  };
  return { metadata, metrics: emptyMetrics(), attributes: new Map() };
}

function poolOf(endpoint: Endpoint): GatewayPool {
  return {
    candidates: () => [endpoint],
    noteDispatched: () => {},
    markFailed: () => {},
    models: () => ["m"],
  };
}

/** Picks the only endpoint; its PreRequest sets both header maps like llm-d plugins do. */
const scheduler: RequestScheduler = {
  processRequestHeaders: () => {},
  prepare: () => {},
  schedule: (_ctx, endpoints): SchedulingResult => ({
    primaryProfileName: "default",
    profileResults: new Map([["default", { targetEndpoints: [endpoints[0] as Endpoint], scored: [] }]]),
  }),
  preRequest: (ctx) => {
    ctx.state.set(
      UPSTREAM_HEADERS_STATE_KEY,
      new Map([
        ["X-Data-Parallel-Host-Port", "127.0.0.1:9000"],
        ["content-length", "1"],
      ]),
    );
    ctx.state.set(RESPONSE_HEADERS_STATE_KEY, new Map([["x-session-token", "abc"]]));
  },
  firstToken: () => {},
  complete: () => {},
};

describe("plugin headers", () => {
  let upstream: { server: Server; port: number };
  let gateway: Gateway;
  before(async () => {
    upstream = await echoServer();
    gateway = await startGateway({ scheduler, pool: poolOf(endpointAt(upstream.port)), port: 0 });
  });
  after(async () => {
    await gateway.close();
    upstream.server.closeAllConnections();
    upstream.server.close();
  });

  it("forwards upstream-headers to the model server and response-headers to the client", async () => {
    const body = JSON.stringify({ model: "m", prompt: "hi", max_tokens: 1 });
    const res = await fetch(`${gateway.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-session-token"), "abc");
    const seen = (await res.json()) as { headers: Record<string, string> };
    assert.equal(seen.headers["x-data-parallel-host-port"], "127.0.0.1:9000");
    assert.equal(seen.headers["content-length"], String(Buffer.byteLength(body)));
  });
});

describe("session affinity end to end (x-session-token)", () => {
  let sims: SimServer[];
  let router: Router;
  before(async () => {
    sims = await startSims(3);
    router = await routerFor(
      sims.map((s) => s.url),
      `apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- type: session-affinity-scorer
- type: queue-scorer
schedulingProfiles:
- name: default
  plugins:
  - {pluginRef: session-affinity-scorer, weight: 10}
  - {pluginRef: queue-scorer, weight: 1}`,
      { allowExperimentalPlugins: true },
    );
  });
  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  async function chat(prompt: string, token?: string): Promise<Response> {
    const res = await fetch(`${router.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { "x-session-token": token } : {}) },
      body: JSON.stringify({ model: MODEL, prompt, max_tokens: 1 }),
    });
    await res.arrayBuffer();
    return res;
  }

  it("returns the token of the serving endpoint and pins the session's next requests to it", async () => {
    const first = await chat("session start");
    assert.equal(first.status, 200);
    const token = first.headers.get("x-session-token");
    const endpoint = first.headers.get("x-llmd-endpoint");
    assert.ok(token && endpoint);
    assert.equal(Buffer.from(token, "base64").toString("utf8"), endpoint);
    for (let i = 0; i < 6; i++) {
      const next = await chat(`unrelated prompt ${i}`, token);
      assert.equal(next.headers.get("x-llmd-endpoint"), endpoint);
    }
  });
});
