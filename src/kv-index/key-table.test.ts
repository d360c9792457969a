import assert from "node:assert/strict";
import { test } from "node:test";
import { seededRandom } from "../scheduler/framework/testing.ts";
import { KeyTable } from "./key-table.ts";

test("behaves like a Map under random sets, replaces and deletes across growth", () => {
  const random = seededRandom(7);
  const table = new KeyTable();
  const model = new Map<number, number>();
  // Few distinct keys with colliding low bits force long probe runs and backward shifts.
  const keyOf = () => Math.floor(random() * 64) * 4096 * 4294967296 + Math.floor(random() * 3000);
  for (let step = 0; step < 40_000; step++) {
    const key = keyOf();
    if (random() < 0.4) {
      table.delete(key);
      model.delete(key);
    } else {
      const value = Math.floor(random() * 1000);
      table.set(key, value);
      model.set(key, value);
    }
    if (step % 997 === 0) for (const [k, v] of model) assert.equal(table.get(k), v);
  }
  assert.equal(table.size, model.size);
  for (const [k, v] of model) assert.equal(table.get(k), v);
  assert.equal(table.get(2 ** 53 - 1), -1);
});

test("53-bit keys differing only in their high bits are distinct", () => {
  const table = new KeyTable();
  table.set(5, 1);
  table.set(5 + 2 ** 40, 2);
  table.set(0, 3);
  assert.deepEqual([table.get(5), table.get(5 + 2 ** 40), table.get(0), table.get(2 ** 40)], [1, 2, 3, -1]);
  table.delete(5);
  assert.deepEqual([table.get(5), table.get(5 + 2 ** 40), table.size], [-1, 2, 2]);
});

test("while a doubling drains, lookups, replaces, deletes and values() see every key exactly once", () => {
  const random = seededRandom(11);
  const table = new KeyTable();
  const model = new Map<number, number>();
  const keys: number[] = [];
  for (let step = 0; step < 30_000; step++) {
    const r = random();
    if (r < 0.6 || keys.length === 0) {
      const key = Math.floor(random() * 2 ** 53);
      keys.push(key);
      table.set(key, step);
      model.set(key, step);
    } else {
      const key = keys[Math.floor(random() * keys.length)]!;
      if (r < 0.8) {
        table.set(key, step);
        model.set(key, step);
      } else {
        table.delete(key);
        model.delete(key);
      }
    }
    const probe = keys[Math.floor(random() * keys.length)]!;
    assert.equal(table.get(probe), model.get(probe) ?? -1);
    assert.equal(table.size, model.size);
    if (step % 2999 === 0)
      assert.deepEqual(
        table.values().sort((a, b) => a - b),
        [...model.values()].sort((a, b) => a - b),
      );
  }
  for (const [k, v] of model) assert.equal(table.get(k), v);
});
