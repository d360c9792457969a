import assert from "node:assert/strict";
import { test } from "node:test";
import { buildIds, ConversationIds, copiedFrom, isAppendOnly } from "./conversation-ids.ts";

const ids = (...values: number[]) => Uint32Array.from(values);

test("ids are appended after the written ones; a view handed out never changes", () => {
  const array = new ConversationIds(8);
  assert.equal(array.append(0, [ids(1, 2), ids(3)]), 3);
  const first = array.view(3);
  assert.equal(array.append(3, [ids(4, 5)]), 5);
  assert.deepEqual(Array.from(first), [1, 2, 3]);
  assert.deepEqual(Array.from(array.view(5)), [1, 2, 3, 4, 5]);
  assert.equal(array.length, 5);
  assert.equal(array.bytes, 32);
});

test("a write over written ids goes through only where it agrees with them", () => {
  const array = new ConversationIds(8);
  array.append(0, [ids(1, 2, 3, 4)]);
  assert.equal(array.append(2, [ids(3), ids(4, 9)]), 5, "agrees with 3, 4, then goes on");
  assert.deepEqual(Array.from(array.view(5)), [1, 2, 3, 4, 9]);
  assert.equal(array.append(2, [ids(3, 7)]), -1, "7 is not what was written at 3");
  assert.equal(array.append(4, [ids(9, 1, 2, 3, 4)]), -1, "no room");
  assert.deepEqual(Array.from(array.view(5)), [1, 2, 3, 4, 9], "a refused write writes nothing");
});

test("a copy holds the prefix with room to grow; views from the start of an array are append-only", () => {
  const array = new ConversationIds(4);
  array.append(0, [ids(1, 2, 3)]);
  const copy = ConversationIds.copyOf(array.view(2), 10);
  assert.equal(copy.length, 2);
  assert.ok(copy.bytes >= 12 * 4);
  assert.equal(copy.append(2, [ids(8)]), 3);
  assert.deepEqual(Array.from(copy.view(3)), [1, 2, 8]);
  assert.ok(isAppendOnly(copy.view(3)));
  assert.ok(!isAppendOnly(copy.view(3).subarray(1)), "not from the start");
  assert.ok(!isAppendOnly(ids(1, 2, 8)), "any other array");
  const copied = copiedFrom(copy.view(3));
  assert.equal(copied?.source.deref(), array.view(1).buffer, "the copy knows the array it copied");
  assert.equal(copied?.length, 2);
  assert.equal(copiedFrom(array.view(1)), null);
});

test("buildIds makes, on any thread, the array copyOf and append would; adopt registers it as their copy", () => {
  const array = new ConversationIds(4);
  array.append(0, [ids(1, 2, 3)]);
  const built = buildIds(array.view(2), [ids(8, 9), ids(7)], 1);
  assert.deepEqual(
    built.parts.map((part) => Array.from(part)),
    [[8, 9], [7]],
    "the parts are views of the new buffer",
  );
  assert.equal(built.parts[0]!.buffer, built.buffer);
  const adopted = ConversationIds.adopt(built, array.view(2));
  const made = ConversationIds.copyOf(array.view(2), 4);
  made.append(2, [ids(8, 9), ids(7)]);
  assert.deepEqual(Array.from(adopted.view(adopted.length)), Array.from(made.view(made.length)));
  assert.deepEqual([adopted.length, adopted.capacity], [made.length, made.capacity]);
  assert.equal(adopted.append(5, [ids(6)]), 6, "room for what was asked");
  assert.ok(isAppendOnly(adopted.view(6)));
  assert.equal(copiedFrom(adopted.view(6))?.source.deref(), array.buffer);
  assert.equal(copiedFrom(adopted.view(6))?.length, 2);
  const fresh = ConversationIds.adopt(buildIds(ids(), [ids(5)], 0), new ConversationIds(0).view(0));
  assert.deepEqual(Array.from(fresh.view(1)), [5]);
  assert.equal(copiedFrom(fresh.view(1)), null, "a new conversation copied nothing");
});
