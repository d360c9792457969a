import assert from "node:assert/strict";
import { test } from "node:test";
import { SegmentCache } from "./segment-cache.ts";

const ids = (n: number) => new Uint32Array(n);

test("bytes count keys (2 per code unit) and ids (4 each); the least recently used go first", () => {
  const cache = new SegmentCache(100);
  cache.set("aaaa", ids(4)); // 8 + 16 = 24
  cache.set("bbbb", ids(4));
  cache.set("cccc", ids(4));
  assert.equal(cache.bytes, 72);
  assert.ok(cache.get("aaaa"), "a is now the most recent");
  cache.set("dddd", ids(4)); // 96
  cache.set("eeee", ids(4)); // 120 > 100: b, the least recent, goes
  assert.equal(cache.get("bbbb"), undefined);
  assert.ok(cache.get("aaaa") && cache.get("cccc") && cache.get("dddd") && cache.get("eeee"));
  assert.equal(cache.bytes, 96);
  assert.equal(cache.size, 4);
});

test("replacing an entry re-counts it; one bigger than the budget is not kept", () => {
  const cache = new SegmentCache(100);
  cache.set("aaaa", ids(4));
  cache.set("aaaa", ids(8));
  assert.equal(cache.bytes, 40);
  cache.set("x".repeat(60), ids(1));
  assert.equal(cache.size, 1);
  assert.equal(cache.bytes, 40);
});
