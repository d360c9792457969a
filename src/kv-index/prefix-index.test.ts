import assert from "node:assert/strict";
import { test } from "node:test";
import { seededRandom } from "../scheduler/framework/testing.ts";
import { PrefixIndex } from "./prefix-index.ts";

const hashes = (...values: number[]) => Float64Array.from(values);

function matchOf(index: PrefixIndex, keys: number[], servers: string[]): number[] {
  const out = new Int32Array(servers.length);
  index.match(hashes(...keys), keys.length, servers, out);
  return [...out];
}

test("match counts only the blocks each server holds contiguously from the start", () => {
  const index = new PrefixIndex(100);
  index.insert("a", hashes(1, 2, 3, 4), 4);
  index.insert("b", hashes(1, 2), 2);
  index.insert("c", hashes(3, 4), 2); // holds later blocks but not the root
  assert.deepEqual(matchOf(index, [1, 2, 3, 4, 5], ["a", "b", "c", "unknown"]), [4, 2, 0, 0]);
  assert.deepEqual(matchOf(index, [9, 2, 3], ["a", "b"]), [0, 0]);
});

test("per-server LRU evicts the least recent hashes and unindexes them", () => {
  const index = new PrefixIndex(3);
  index.insert("a", hashes(1, 2, 3), 3);
  index.insert("a", hashes(7, 8), 2);
  assert.equal(index.entries("a"), 3);
  // Prompt (1,2,3) was inserted tail-first, so its root 1 was most recent and 3, 2 went first.
  assert.deepEqual(matchOf(index, [1, 2, 3], ["a"]), [1]);
  assert.deepEqual(matchOf(index, [7, 8], ["a"]), [2]);
  assert.equal(index.size, 3);
});

test("touching a hash keeps it; capacity shrink evicts down; removal forgets a server", () => {
  const index = new PrefixIndex(2);
  index.insert("a", hashes(1), 1);
  index.insert("a", hashes(2), 1);
  index.insert("a", hashes(1), 1);
  index.insert("a", hashes(3), 1);
  assert.deepEqual(matchOf(index, [1], ["a"]), [1]);
  assert.deepEqual(matchOf(index, [2], ["a"]), [0]);
  index.setCapacity("a", 1);
  assert.equal(index.entries("a"), 1);
  index.insert("b", hashes(3), 1);
  index.removeServer("a");
  assert.equal(index.entries("a"), 0);
  assert.deepEqual(matchOf(index, [3], ["a", "b"]), [0, 1]);
});

test("data-parallel ranks are distinct servers", () => {
  const index = new PrefixIndex(10);
  index.insert("ns/pod-rank-0", hashes(1, 2), 2);
  assert.deepEqual(matchOf(index, [1, 2], ["ns/pod-rank-0", "ns/pod-rank-1"]), [2, 0]);
});

test("binary-search match equals the block-by-block walk under random chained inserts and LRU pressure", () => {
  const random = seededRandom(42);
  const servers = ["s0", "s1", "s2", "s3", "s4"];
  const index = new PrefixIndex(40);
  // Prompts form a tree: each extends a random earlier prompt's prefix with fresh blocks.
  const prompts: number[][] = [[1]];
  let nextKey = 2;
  for (let i = 0; i < 300; i++) {
    const parent = prompts[Math.floor(random() * prompts.length)]!;
    const keep = parent.slice(0, 1 + Math.floor(random() * parent.length));
    const grow = Array.from({ length: 1 + Math.floor(random() * 12) }, () => nextKey++);
    prompts.push([...keep, ...grow]);
  }
  const walk = (server: string, keys: number[]) => {
    let held = 0;
    while (held < keys.length && index.holds(server, keys[held]!)) held++;
    return held;
  };
  for (let step = 0; step < 3000; step++) {
    const server = servers[Math.floor(random() * servers.length)]!;
    const keys = prompts[Math.floor(random() * prompts.length)]!;
    const roll = random();
    if (roll < 0.6) index.insert(server, hashes(...keys), Math.ceil(random() * keys.length));
    else if (roll < 0.65) index.setCapacity(server, 5 + Math.floor(random() * 40));
    else if (roll < 0.67) index.removeServer(server);
    const out = new Int32Array(servers.length);
    index.match(hashes(...keys), keys.length, servers, out);
    assert.deepEqual(
      [...out],
      servers.map((s) => walk(s, keys)),
      `step ${step}`,
    );
  }
});

test("inserts recorded for later are applied in order before any read, as if inserted at once", () => {
  const random = seededRandom(7);
  const servers = ["s0", "s1", "s2"];
  const now = new PrefixIndex(30);
  const later = new PrefixIndex(30);
  const reads: ((index: PrefixIndex, keys: number[]) => unknown)[] = [
    (index, keys) => matchOf(index, keys, servers),
    (index) => servers.map((s) => index.entries(s)),
    (index) => index.size,
    (index, keys) => servers.map((s) => index.holds(s, keys[0]!)),
  ];
  let nextKey = 1;
  const prompts: number[][] = [];
  for (let step = 0; step < 2000; step++) {
    const server = servers[Math.floor(random() * servers.length)]!;
    if (prompts.length === 0 || random() < 0.3)
      prompts.push(Array.from({ length: 1 + Math.floor(random() * 20) }, () => nextKey++));
    const keys = prompts[Math.floor(random() * prompts.length)]!;
    const roll = random();
    if (roll < 0.5) {
      // Several inserts in a row, the order of which decides the LRU evictions; an insert at once
      // among recorded ones comes after them.
      now.insert(server, hashes(...keys), keys.length);
      if (random() < 0.2) later.insert(server, hashes(...keys), keys.length);
      else later.insertLater(server, hashes(...keys), keys.length);
    } else if (roll < 0.55) {
      now.setCapacity(server, 5 + Math.floor(random() * 30));
      later.setCapacity(server, now.capacity(server));
    } else if (roll < 0.57) {
      now.removeServer(server);
      later.removeServer(server);
    } else if (roll < 0.6) later.settle();
    else {
      const read = reads[Math.floor(random() * reads.length)]!;
      assert.deepEqual(read(later, keys), read(now, keys), `step ${step}`);
    }
  }
});
