/**
 * Slow and greedy clients at the router's edge: one that stalls after half its body, or before the
 * end of its headers, is answered 408 and disconnected once the (short, here) timeout passes; the
 * bytes of request bodies held at once are bounded, past which a request gets 429 while others
 * are served. Raw sockets, since no HTTP client stalls on purpose.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, routerFor, startSims } from "./harness.ts";

/** Opens a raw connection to `router` and writes `text`; `closed` resolves with all it read. */
function rawClient(router: Router, text: string): { socket: Socket; closed: Promise<string> } {
  const socket = connect(Number(new URL(router.url).port), "127.0.0.1");
  socket.write(text);
  let seen = "";
  socket.on("data", (chunk: Buffer) => {
    seen += chunk.toString();
  });
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(seen)));
  return { socket, closed };
}

/** An HTTP/1.1 POST head for `/v1/completions` declaring `length` body bytes. */
const head = (length: number) =>
  `POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;

/** A completions body of exactly `size` bytes. */
function bodyOf(size: number): string {
  const base = JSON.stringify({ model: MODEL, prompt: "", max_tokens: 1 });
  return JSON.stringify({ model: MODEL, prompt: "x".repeat(size - base.length), max_tokens: 1 });
}

function post(router: Router, body: string): Promise<Response> {
  return fetch(`${router.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
}

describe("slow clients", () => {
  let sims: SimServer[];
  let router: Router;
  before(async () => {
    sims = await startSims(1);
    router = await routerFor(
      sims.map((s) => s.url),
      undefined,
      { headerTimeoutMs: 1000, bodyTimeoutMs: 1000 },
    );
  });
  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  // The timeouts bound a hang should the cut-off not happen; nothing asserts how long it took.
  it("cuts off a client that sends its headers and half its body, then stalls: 408 request_timeout", {
    timeout: 30_000,
  }, async () => {
    const body = bodyOf(200);
    const stalled = rawClient(router, head(body.length) + body.slice(0, 100));
    const answer = await stalled.closed;
    assert.match(answer, /^HTTP\/1\.1 408 /, answer);
    assert.match(answer, /"code":"request_timeout"/);
    assert.match(answer, /connection: close/i);
    assert.equal(router.gateway.draining, false);
  });

  it("cuts off a client that stalls in the middle of its headers: 408 JSON", {
    timeout: 30_000,
  }, async () => {
    const stalled = rawClient(router, "POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: appl");
    const answer = await stalled.closed;
    assert.match(answer, /^HTTP\/1\.1 408 /, answer);
    assert.match(answer, /"code":"request_timeout"/);
  });

  it("serves a client that sends slowly but steadily, each gap a tenth of the body timeout", async () => {
    const body = bodyOf(300);
    const client = rawClient(router, head(body.length));
    for (let i = 0; i < body.length; i += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      client.socket.write(body.slice(i, i + 100));
    }
    const answer = await new Promise<string>((resolve) => {
      let seen = "";
      client.socket.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('"usage"')) resolve(seen);
      });
    });
    client.socket.destroy();
    assert.match(answer, /^HTTP\/1\.1 200 /);
  });
});

describe("the bytes of request bodies held at once", () => {
  let sims: SimServer[];
  let router: Router;
  before(async () => {
    sims = await startSims(1);
    router = await routerFor(
      sims.map((s) => s.url),
      undefined,
      { maxInflightBodyBytes: 1000, bodyTimeoutMs: 30_000 },
    );
  });
  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  it("answers 429 request_bodies_full past the limit, serves what fits, and frees a body's bytes when it ends", async () => {
    const big = bodyOf(900);
    const holder = rawClient(router, head(big.length) + big.slice(0, 700));
    // The holder's 700 bytes are in: wait until a body of 400 no longer fits.
    let refused: Response | undefined;
    for (let i = 0; i < 100 && !refused; i++) {
      const r = await post(router, bodyOf(400));
      if (r.status === 429) refused = r;
      else await r.arrayBuffer();
    }
    assert.ok(refused, "a body that does not fit is refused");
    assert.equal(refused.headers.get("retry-after"), "1");
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "request_bodies_full");

    const small = await post(router, bodyOf(250));
    assert.equal(small.status, 200, "a body that fits is served");
    await small.arrayBuffer();

    holder.socket.destroy();
    await holder.closed;
    let served = 0;
    for (let i = 0; i < 100 && served === 0; i++) {
      const r = await post(router, bodyOf(900));
      if (r.status === 200) served++;
      await r.arrayBuffer();
    }
    assert.equal(served, 1, "the holder's bytes came back when it left");
  });
});
