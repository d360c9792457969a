import assert from "node:assert/strict";
import { test } from "node:test";
import { assignBurst, type BurstEntry } from "./assign.ts";

/** A prompt of `blocks` chained hashes: `family` shares its first `shared` blocks with its kind. */
function prompt(family: string, blocks: number, shared = 0): Float64Array {
  const hashes = new Float64Array(blocks);
  let h = 7;
  for (let i = 0; i < blocks; i++) {
    const salt = i < shared ? "shared" : family;
    h = (h * 31 + i + [...salt].reduce((a, c) => a * 33 + c.charCodeAt(0), 0)) % 2 ** 48;
    hashes[i] = h;
  }
  return hashes;
}
const entries = (...prompts: Float64Array[]): BurstEntry[] => prompts.map((hashes) => ({ hashes }));
const replicas = (n: number, running: number[] = []) =>
  Array.from({ length: n }, (_, i) => ({ key: `r${i}`, running: running[i] ?? 0 }));
const where = (es: readonly BurstEntry[]) => es.map((e) => e.assigned ?? "-");

test("a rollout group goes whole to one replica; two groups to two; a lone request gets nothing", () => {
  const a = prompt("a", 8);
  const b = prompt("b", 8);
  const batch = entries(a, b, a, prompt("c", 8), b, a, a);
  assignBurst(batch, replicas(3), -1, 0);
  assert.deepEqual(where(batch), ["r0", "r1", "r0", "-", "r1", "r0", "r0"]);
});

test("maxPerReplica k splits a group into runs of k on the least-loaded replicas, running requests breaking ties", () => {
  const a = prompt("a", 4);
  const batch = entries(a, a, a, a, a);
  assignBurst(batch, replicas(3, [5, 0, 2]), 2, 0);
  assert.deepEqual(where(batch), ["r1", "r1", "r2", "r2", "r0"]);
  const over = entries(a, a, a, a);
  assignBurst(over, replicas(1), 2, 0);
  assert.deepEqual(where(over), ["r0", "r0", "r0", "r0"], "past k × replicas: the only replica");
});

test("longer groups are placed first; empty prompts never group", () => {
  const long = prompt("long", 16);
  const short = prompt("short", 2);
  const batch = entries(short, short, long, long, new Float64Array(0), new Float64Array(0));
  assignBurst(batch, replicas(2), -1, 0);
  assert.deepEqual(where(batch), ["r1", "r1", "r0", "r0", "-", "-"]);
});

test("minColocateBlocks: lone requests sharing a prefix become units and join the replica holding it, within the fair share", () => {
  const system = (family: string) => prompt(family, 10, 6);
  const group = system("g");
  const batch = entries(group, group, system("x"), system("y"), prompt("z", 10));
  assignBurst(batch, replicas(3), -1, 4);
  // 4 unit members over 3 replicas: fair share 2. The group fills r0 to it, so x, sharing its first
  // 6 blocks, cannot join there and takes r1; y then joins x there. z shares nothing: unassigned.
  assert.deepEqual(where(batch), ["r0", "r0", "r1", "r1", "-"]);

  const three = entries(group, group, system("x"), system("y"), system("v"), system("w"));
  assignBurst(three, replicas(2), -1, 4);
  // Fair share 3: x joins the group's r0; y, v and w find r0 full and co-locate on r1 (y seeds it).
  assert.deepEqual(where(three), ["r0", "r0", "r0", "r1", "r1", "r1"]);

  const off = entries(group, group, system("x"), system("y"));
  assignBurst(off, replicas(3), -1, 0);
  assert.deepEqual(where(off), ["r0", "r0", "-", "-"], "0 = identical groups only");
});
