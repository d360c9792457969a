/**
 * Slow, greedy and odd clients at the edge, for the router and for `llmd sim` alike: one that
 * stalls after half its body, or before the end of its headers, is answered 408 and disconnected
 * once the (short, here) timeout passes; the bytes of request bodies held at once are bounded, past
 * which a request gets 429 while others are served; a CONNECT gets 405. Raw sockets, since no HTTP
 * client stalls on purpose.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { MODEL, routerFor, startSims } from "../router/harness.ts";

/** The edge bounds a test server starts with. */
interface Edge {
  headerTimeoutMs?: number;
  bodyTimeoutMs?: number;
  maxInflightBodyBytes?: number;
}

/** A server under test: its base URL and how to stop it. */
interface Target {
  url: string;
  close(): Promise<void>;
}

/**
 * Budget bytes one completions body byte costs: the router also counts the parsed copy it holds
 * (src/gateway/inference.ts), the simulator the raw bytes.
 */
const HELD_PER_BYTE = { "llmd router": 2, "llmd sim": 1 } as const;

/** `llmd sim` with `edge` as its flags. */
async function simTarget(edge: Edge): Promise<Target> {
  const flags: Record<string, unknown> = {};
  if (edge.headerTimeoutMs) flags["header-timeout"] = `${edge.headerTimeoutMs}ms`;
  if (edge.bodyTimeoutMs) flags["body-timeout"] = `${edge.bodyTimeoutMs}ms`;
  if (edge.maxInflightBodyBytes) flags["max-inflight-body-bytes"] = edge.maxInflightBodyBytes;
  const [sim] = await startSims(1, flags);
  return sim!;
}

/** `llmd router` with `edge` as its options, over one simulator. */
async function routerTarget(edge: Edge): Promise<Target> {
  const sims = await startSims(1);
  const router = await routerFor(
    sims.map((s) => s.url),
    undefined,
    edge,
  );
  return {
    url: router.url,
    close: async () => {
      await router.close();
      await Promise.all(sims.map((s) => s.close()));
    },
  };
}

/** Opens a raw connection to `target` and writes `text`; `closed` resolves with all it read. */
function rawClient(target: Target, text: string): { socket: Socket; closed: Promise<string> } {
  const socket = connect(Number(new URL(target.url).port), "127.0.0.1");
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

function post(target: Target, body: string): Promise<Response> {
  return fetch(`${target.url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
}

for (const [name, start] of [
  ["llmd router", routerTarget],
  ["llmd sim", simTarget],
] as const) {
  describe(`${name}: slow clients`, () => {
    let target: Target;
    before(async () => {
      target = await start({ headerTimeoutMs: 1000, bodyTimeoutMs: 1000 });
    });
    after(() => target.close());

    // The timeouts bound a hang should the cut-off not happen; nothing asserts how long it took.
    it("cuts off a client that sends its headers and half its body, then stalls: 408 request_timeout", {
      timeout: 30_000,
    }, async () => {
      const body = bodyOf(200);
      const stalled = rawClient(target, head(body.length) + body.slice(0, 100));
      const answer = await stalled.closed;
      assert.match(answer, /^HTTP\/1\.1 408 /, answer);
      assert.match(answer, /"code":"request_timeout"/);
      assert.match(answer, /connection: close/i);
    });

    it("cuts off a client that stalls in the middle of its headers: 408 JSON", {
      timeout: 30_000,
    }, async () => {
      const stalled = rawClient(target, "POST /v1/completions HTTP/1.1\r\nhost: x\r\ncontent-type: appl");
      const answer = await stalled.closed;
      assert.match(answer, /^HTTP\/1\.1 408 /, answer);
      assert.match(answer, /"code":"request_timeout"/);
    });

    it("serves a client that sends slowly but steadily, each gap a tenth of the body timeout", async () => {
      const body = bodyOf(300);
      const client = rawClient(target, head(body.length));
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

    it("answers CONNECT 405 method_not_allowed (OpenAI JSON) and closes, as it is no proxy", async () => {
      const client = rawClient(target, "CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n");
      const answer = await client.closed;
      assert.match(answer, /^HTTP\/1\.1 405 /, answer);
      assert.match(answer, /connection: close/i);
      const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as { error: { code: string } };
      assert.equal(body.error.code, "method_not_allowed");
      const after = await post(target, bodyOf(200));
      assert.equal(after.status, 200, "serves normally afterwards");
      await after.arrayBuffer();
    });
  });

  describe(`${name}: the request bodies held at once (room for 1000 body bytes)`, () => {
    let target: Target;
    before(async () => {
      target = await start({ maxInflightBodyBytes: 1000 * HELD_PER_BYTE[name], bodyTimeoutMs: 30_000 });
    });
    after(() => target.close());

    it("answers 429 request_bodies_full past the limit, serves what fits, and frees a body's bytes when it ends", async () => {
      const big = bodyOf(900);
      const holder = rawClient(target, head(big.length) + big.slice(0, 700));
      // The holder's 700 bytes are in: wait until a body of 400 no longer fits.
      let refused: Response | undefined;
      for (let i = 0; i < 100 && !refused; i++) {
        const r = await post(target, bodyOf(400));
        if (r.status === 429) refused = r;
        else await r.arrayBuffer();
      }
      assert.ok(refused, "a body that does not fit is refused");
      assert.equal(refused.headers.get("retry-after"), "1");
      assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "request_bodies_full");

      const small = await post(target, bodyOf(250));
      assert.equal(small.status, 200, "a body that fits is served");
      await small.arrayBuffer();

      holder.socket.destroy();
      await holder.closed;
      let served = 0;
      for (let i = 0; i < 100 && served === 0; i++) {
        const r = await post(target, bodyOf(900));
        if (r.status === 200) served++;
        await r.arrayBuffer();
      }
      assert.equal(served, 1, "the holder's bytes came back when it left");
    });
  });

  describe(`${name}: a large declared body (room for 200 KB of bodies)`, () => {
    let target: Target;
    before(async () => {
      target = await start({ maxInflightBodyBytes: 200_000 * HELD_PER_BYTE[name], bodyTimeoutMs: 30_000 });
    });
    after(() => target.close());

    it("holds its whole declared length from its first byte, then serves it", async () => {
      const big = bodyOf(150_000);
      const holder = rawClient(target, head(big.length) + big.slice(0, 10_000));
      let refused = false;
      for (let i = 0; i < 100 && !refused; i++) {
        const r = await post(target, bodyOf(60_000));
        refused = r.status === 429;
        await r.arrayBuffer();
      }
      assert.ok(refused, "150 KB declared + 60 KB do not fit, though only 10 KB of the first arrived");
      const answered = new Promise<string>((resolve) => {
        let seen = "";
        holder.socket.on("data", (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes('"usage"')) resolve(seen);
        });
      });
      holder.socket.write(big.slice(10_000));
      assert.match(await answered, /^HTTP\/1\.1 200 /);
      holder.socket.destroy();
    });
  });
}
