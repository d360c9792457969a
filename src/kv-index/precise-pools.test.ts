import assert from "node:assert/strict";
import { test } from "node:test";
import { EngineBlockPool, ExpiryQueue, TailTokens } from "./precise-pools.ts";

test("a freed tail run is reused by the next tail of its length only", () => {
  const tails = new TailTokens();
  const a = tails.alloc(16);
  const b = tails.alloc(32);
  tails.release(a, 16);
  assert.notEqual(tails.alloc(32), a, "another length does not take the freed run");
  assert.equal(tails.alloc(16), a);
  tails.release(b, 32);
  tails.release(a, 16);
  assert.equal(tails.alloc(16), a);
  assert.equal(tails.alloc(32), b);
});

test("engine blocks keep their tails in the pool's token array across growth and reuse", () => {
  const blocks = new EngineBlockPool();
  const tokens = Array.from({ length: 64 }, (_, i) => i * 3 + 1);
  const ids: number[] = [];
  for (let i = 0; i < 5000; i++) {
    const id = blocks.alloc(0, i, 1);
    blocks.setTail(id, tokens, i % 3, 16 * (1 + (i % 3)));
    ids.push(id);
  }
  const tailOf = (id: number) => {
    const at = blocks.tailAt[id]!;
    return [...blocks.tail.tokens.subarray(at, at + blocks.tailLength[id]!)];
  };
  for (const [i, id] of ids.entries())
    assert.deepEqual(tailOf(id), tokens.slice(i % 3, (i % 3) + 16 * (1 + (i % 3))));
  blocks.release(ids[7]!); // a 32-token tail
  const again = blocks.alloc(0, 7, 1);
  assert.equal(blocks.tailLength[again], 0, "a reused block starts without a tail");
  blocks.setTail(again, tokens, 8, 32);
  assert.deepEqual(tailOf(again), tokens.slice(8, 40));
  assert.deepEqual(tailOf(ids[6]!), tokens.slice(0, 16), "its neighbours are untouched");
  assert.deepEqual(tailOf(ids[8]!), tokens.slice(2, 50));
});

test("the expiry queue is first in, first out across wrap-arounds and doublings", () => {
  const queue = new ExpiryQueue();
  const model: number[] = [];
  let next = 0;
  for (let round = 0; round < 5_000; round++) {
    // Pushes outnumber shifts, so the ring wraps while it fills, then doubles mid-wrap.
    for (let k = 0; k < 3; k++) {
      queue.push(next, next * 7, next + 0.5);
      model.push(next++);
    }
    for (let k = 0; k < 2; k++) {
      assert.deepEqual(
        [queue.holder(0), queue.generation(0), queue.until(0)],
        [model[0], model[0]! * 7, model[0]! + 0.5],
      );
      queue.shift();
      model.shift();
    }
  }
  assert.equal(queue.length, model.length);
  assert.deepEqual(
    Array.from({ length: queue.length }, (_, i) => queue.holder(i)),
    model,
  );
});
