import assert from "node:assert/strict";
import { test } from "node:test";
import { SlotList } from "./slot-list.ts";

test("members come and go by slot; freed slots are reused and hold nothing", () => {
  const list = new SlotList<string>();
  const a = list.add("a");
  const b = list.add("b");
  const c = list.add("c");
  assert.deepEqual([list.size, list.members()], [3, ["a", "b", "c"]]);
  list.remove(b);
  list.remove(b);
  assert.deepEqual([list.size, list.members()], [2, ["a", "c"]]);
  assert.equal(list.add("d"), b);
  assert.deepEqual(list.members(), ["a", "d", "c"]);
  list.remove(a);
  list.remove(c);
  assert.deepEqual([list.size, list.members()], [1, ["d"]]);
  list.clear();
  assert.deepEqual([list.size, list.members()], [0, []]);
  assert.equal(list.add("e"), 0);
});
