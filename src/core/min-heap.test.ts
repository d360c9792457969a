import assert from "node:assert/strict";
import { test } from "node:test";
import { MinHeap } from "./min-heap.ts";
import { seededRandom } from "./random.ts";

test("MinHeap pops in `less` order under interleaved pushes and pops", () => {
  const random = seededRandom(7);
  const heap = new MinHeap<number>((a, b) => a < b);
  const reference: number[] = [];
  for (let i = 0; i < 5000; i++) {
    if (reference.length > 0 && random() < 0.4) {
      reference.sort((a, b) => a - b);
      assert.equal(heap.pop(), reference.shift());
    } else {
      const v = Math.floor(random() * 1000);
      heap.push(v);
      reference.push(v);
    }
    assert.equal(heap.size, reference.length);
  }
  reference.sort((a, b) => a - b);
  assert.equal(heap.peek(), reference[0]);
  assert.deepEqual(
    [...heap].sort((a, b) => a - b),
    reference,
  );
  while (heap.size > 0) assert.equal(heap.pop(), reference.shift());
  assert.equal(heap.pop(), undefined);
});
