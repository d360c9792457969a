import assert from "node:assert/strict";
import { test } from "node:test";
import { seededRandom } from "../core/random.ts";
import { hashPrefixBlocks } from "../kv-index/block-hasher.ts";
import { heldPrefixBlocks } from "../kv-index/held-block-hashes.ts";
import { copiedFrom, isAppendOnly } from "./conversation-ids.ts";
import { HeldIdPrompts, MIN_HELD_IDS, sharedIds } from "./id-prompts.ts";

const random = seededRandom(7);
const ids = (n: number) => Uint32Array.from({ length: n }, () => Math.floor(random() * 128_000));
const join = (...parts: Uint32Array[]) => Uint32Array.from(parts.flatMap((p) => Array.from(p)));

test("a prompt that continues a held one, or repeats it, is a longer view of the same array", () => {
  const held = new HeldIdPrompts(64 * 1024 * 1024);
  const first = ids(MIN_HELD_IDS + 100);
  const a = held.hold(first);
  assert.ok(isAppendOnly(a));
  assert.deepEqual(a, first);
  const next = join(first, ids(300));
  const b = held.hold(next);
  assert.equal(b.buffer, a.buffer);
  assert.deepEqual(b, next);
  const again = held.hold(Uint32Array.from(first));
  assert.equal(again.buffer, a.buffer);
  assert.deepEqual(again, first);
  assert.deepEqual(a, first, "the earlier view is unchanged");
});

test("a prompt that shares a start and then differs gets its own array, copied from the shared ids", () => {
  const held = new HeldIdPrompts(64 * 1024 * 1024);
  const system = ids(MIN_HELD_IDS);
  const one = held.hold(join(system, ids(500)));
  const otherIds = join(system, ids(700));
  const other = held.hold(otherIds);
  assert.notEqual(other.buffer, one.buffer);
  assert.deepEqual(other, otherIds);
  const copied = copiedFrom(other);
  assert.equal(copied?.source.deref(), one.buffer);
  assert.ok(copied!.length >= MIN_HELD_IDS && copied!.length < MIN_HELD_IDS + 500);
  // Either conversation continues in its own array; the block keys are those of the plain ids.
  const oneNext = join(one, ids(64));
  const continued = held.hold(oneNext);
  assert.equal(continued.buffer, one.buffer);
  for (const view of [other, continued]) {
    assert.deepEqual(
      heldPrefixBlocks(view, 64, 1 << 20, 5),
      hashPrefixBlocks(Uint32Array.from(view), 64, 1 << 20, 5),
    );
  }
});

test("short prompts, and any with a budget of 0, come back as they are; the budget forgets the least recently used prompts", () => {
  const short = ids(MIN_HELD_IDS - 1);
  const budget = 1024 * 1024; // about 14 of the 40 arrays (72 KB each)
  const held = new HeldIdPrompts(budget);
  assert.equal(held.hold(short), short);
  assert.equal(held.bytes, 0);
  const none = new HeldIdPrompts(0);
  const long = ids(MIN_HELD_IDS);
  assert.equal(none.hold(long), long);
  assert.equal(none.bytes, 0);
  const prompts = Array.from({ length: 40 }, () => ids(16_384));
  const views = prompts.map((p) => held.hold(p));
  assert.ok(held.bytes <= budget, `${held.bytes} bytes held`);
  assert.equal(held.hold(join(prompts[39]!, ids(10))).buffer, views[39]!.buffer, "the newest is held");
  assert.notEqual(held.hold(join(prompts[0]!, ids(10))).buffer, views[0]!.buffer, "the oldest was let go");
});

test("sharedIds finds the first difference wherever it is", () => {
  for (let t = 0; t < 200; t++) {
    const a = ids(1 + Math.floor(random() * 5000));
    const b = Uint32Array.from(a.subarray(0, Math.floor(random() * (a.length + 1))));
    const cut = Math.floor(random() * (b.length + 1));
    if (cut < b.length && random() < 0.7) b[cut] = (b[cut]! + 1) % 128_000;
    let expected = 0;
    while (expected < Math.min(a.length, b.length) && a[expected] === b[expected]) expected++;
    assert.equal(sharedIds(a, b), expected);
    assert.equal(sharedIds(b, a), expected);
  }
});
