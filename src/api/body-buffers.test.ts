import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { BodyBuffers } from "./body-buffers.ts";
import { BodyBudget, readBody } from "./request-body.ts";

const KB = 1024;

test("a buffer given back is reused for the next body of its size class", () => {
  const buffers = new BodyBuffers();
  const first = buffers.take(800 * KB);
  assert.equal(first.length, 800 * KB);
  buffers.give(first);
  assert.equal(buffers.idleBytes, 1024 * KB);
  const reused = buffers.take(700 * KB);
  assert.equal(reused.buffer, first.buffer);
  assert.equal(reused.length, 700 * KB);
  assert.equal(buffers.idleBytes, 0);
});

test("a lease's buffer is reused only after its release and once every hold on it is done", () => {
  const buffers = new BodyBuffers();
  const budget = new BodyBudget(16 * 1024 * KB, buffers);
  const lease = budget.lease();
  const body = lease.receiveBuffer(100 * KB);
  // The approximate prefix producer's deferred whole-prompt hash, taken at dispatch.
  const hashed = lease.hold();
  const logged = lease.hold();
  lease.release();
  assert.equal(budget.heldBytes, 0, "the budget's share is given back at once");
  assert.notEqual(buffers.take(100 * KB).buffer, body.buffer, "held: not handed out");
  hashed();
  hashed();
  assert.notEqual(buffers.take(100 * KB).buffer, body.buffer, "one hold left");
  logged();
  assert.equal(buffers.take(100 * KB).buffer, body.buffer);
  lease.release();
  assert.equal(buffers.idleBytes, 0, "given back once");
});

test("a hold ended before the release leaves the buffer to the release", () => {
  const buffers = new BodyBuffers();
  const lease = new BodyBudget(16 * 1024 * KB, buffers).lease();
  const body = lease.receiveBuffer(100 * KB);
  lease.hold()();
  assert.notEqual(buffers.take(100 * KB).buffer, body.buffer, "not released: still the request's");
  lease.release();
  assert.equal(buffers.take(100 * KB).buffer, body.buffer);
});

test("bodies past largestBytes and buffers past the idle limit are left to the garbage collector", () => {
  const buffers = new BodyBuffers({ largestBytes: 256 * KB, idleBytes: 256 * KB });
  const large = buffers.take(300 * KB);
  assert.equal(large.buffer.byteLength, 300 * KB);
  buffers.give(large);
  const a = buffers.take(200 * KB);
  const b = buffers.take(200 * KB);
  buffers.give(a);
  buffers.give(b);
  assert.equal(buffers.idleBytes, 256 * KB);
  // A buffer not from a pool (a slice of node's shared pool) is never kept.
  buffers.give(Buffer.from("small"));
  assert.equal(buffers.idleBytes, 256 * KB);
});

test("readBody over HTTP: each large body arrives whole in a reused buffer, counted until its lease is released", async (t) => {
  const budget = new BodyBudget(16 * 1024 * KB, new BodyBuffers());
  const seen: { text: string; space: ArrayBufferLike }[] = [];
  const server = createServer(async (req, res) => {
    const lease = budget.lease();
    const raw = await readBody(req, { limitBytes: 4 * 1024 * KB, lease });
    assert.ok(Buffer.isBuffer(raw));
    assert.equal(budget.heldBytes, raw.length);
    seen.push({ text: raw.toString("latin1"), space: raw.buffer });
    res.end(String(raw.length));
    lease.release();
    assert.equal(budget.heldBytes, 0);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const post = async (body: string) => {
    const req = request({
      port,
      host: "127.0.0.1",
      method: "POST",
      headers: { "content-length": body.length },
    });
    req.end(body);
    const [res] = (await once(req, "response")) as [NodeJS.ReadableStream];
    let answer = "";
    for await (const chunk of res) answer += String(chunk);
    return answer;
  };
  const bodies = ["a".repeat(800 * KB), `${"b".repeat(600 * KB)}tail`, "c".repeat(70 * KB)];
  for (const body of bodies) {
    assert.equal(await post(body), String(body.length));
  }
  assert.deepEqual(
    seen.map((s) => s.text),
    bodies,
  );
  assert.equal(seen[1]?.space, seen[0]?.space, "the second body reuses the first's buffer");
  assert.notEqual(seen[2]?.space, seen[0]?.space, "a 70 KB body takes a smaller class");
});
