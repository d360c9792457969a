import assert from "node:assert/strict";
import { test } from "node:test";
import { BlockHashTable } from "./hash-table.ts";

const HOMES = [0, 60, 127];

/**
 * Deterministic 53-bit keys. `clustered` keys fold (low ^ high) to one of three home slots of a 128-slot
 * table (including the last one, so probe runs wrap around), which exercises the backward-shift delete.
 */
function keyOf(i: number, clustered: boolean): number {
  if (clustered) return i * 4294967296 + ((i ^ HOMES[i % 3]!) >>> 0);
  return ((i * 2654435761) % 2097152) * 4294967296 + ((i * 40503) >>> 0);
}

for (const clustered of [false, true]) {
  test(`BlockHashTable matches a Map under random insert/delete churn (clustered keys: ${clustered})`, () => {
    const table = new BlockHashTable(64);
    const reference = new Map<number, number>();
    let seed = 7;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    for (let op = 0; op < 20_000; op++) {
      const key = keyOf(rand(200), clustered);
      if (reference.size < 64 && rand(2) === 0) {
        const value = rand(1000);
        assert.equal(table.insertIfAbsent(key, value), !reference.has(key));
        if (!reference.has(key)) reference.set(key, value);
      } else {
        table.delete(key);
        reference.delete(key);
      }
      assert.equal(table.size, reference.size);
      const probe = keyOf(rand(200), clustered);
      assert.equal(table.get(probe), reference.get(probe) ?? -1);
    }
    for (const [key, value] of reference) assert.equal(table.get(key), value);
  });
}

test("BlockHashTable.clear forgets every key and forEachValue visits each stored value once", () => {
  const table = new BlockHashTable(8);
  for (let i = 0; i < 8; i++) table.insertIfAbsent(keyOf(i, true), i);
  const seen: number[] = [];
  table.forEachValue((v) => seen.push(v));
  assert.deepEqual(
    seen.sort((a, b) => a - b),
    [0, 1, 2, 3, 4, 5, 6, 7],
  );
  table.clear();
  assert.equal(table.size, 0);
  assert.equal(table.get(keyOf(3, true)), -1);
});
