import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../core/random.ts";
import { BlockPool } from "./block-pool.ts";
import { KvEventBuffer } from "./kv-events.ts";
import { OffloadTiers } from "./offload-tiers.ts";

const CAPACITY = 48;
const CHAIN = 40;
/** Hash of the watched chain's block i (any distinct non-negative integers do). */
const chainHash = (i: number) => 1000 + i;
const prompt = new Uint32Array(16);

function newPool(): BlockPool {
  const events = new KvEventBuffer(16);
  return new BlockPool(CAPACITY, events, new OffloadTiers(0, 0, events));
}

/** The watch resumed as admission resumes it (leading hits, unreferenced ones counted). */
function resume(pool: BlockPool, owner: object): void {
  pool.watch.follow(owner, CHAIN);
  while (pool.watch.count < CHAIN) {
    const b = pool.lookup(chainHash(pool.watch.count));
    if (b < 0) break;
    pool.watch.push(b, pool.isFree(b));
  }
}

/** The same from scratch: what a full lookup finds now. */
function rescan(pool: BlockPool): { count: number; freeHits: number } {
  let count = 0;
  let freeHits = 0;
  for (; count < CHAIN; count++) {
    const b = pool.lookup(chainHash(count));
    if (b < 0) break;
    if (pool.isFree(b)) freeHits++;
  }
  return { count, freeHits };
}

describe("hit watch", () => {
  it("stays equal to a full rescan under random allocation, registration, hits, release and eviction", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const random = seededRandom(seed);
      const int = (n: number) => Math.floor(random() * n);
      const pool = newPool();
      const owner = {};
      const holders: number[][] = [];
      let resumedPastZero = 0;
      for (let op = 0; op < 400; op++) {
        const r = random();
        if (r < 0.35 && pool.freeBlocks > 0) {
          // A request fills blocks along the chain from a random depth (or unrelated blocks).
          const blocks: number[] = [];
          const start = random() < 0.5 ? 0 : int(CHAIN);
          for (let k = 0; k < 1 + int(6) && pool.freeBlocks > 0; k++) {
            const b = pool.allocate();
            blocks.push(b);
            const hash = random() < 0.8 ? chainHash(start + k) : 5000 + int(1000);
            pool.register(b, hash, -1, prompt, 0, null);
          }
          holders.push(blocks);
        } else if (r < 0.55) {
          // Another request takes hits on a leading part of the chain.
          const blocks: number[] = [];
          for (let i = 0; i < int(CHAIN); i++) {
            const b = pool.lookup(chainHash(i));
            if (b < 0) break;
            pool.acquire(b);
            blocks.push(b);
          }
          holders.push(blocks);
        } else if (holders.length > 0) {
          const blocks = holders.splice(int(holders.length), 1)[0]!;
          pool.release(blocks, blocks.length);
        }
        if (random() < 0.5) {
          resume(pool, owner);
          if (pool.watch.count > 0) resumedPastZero++;
          assert.deepEqual(
            { count: pool.watch.count, freeHits: pool.watch.freeHits },
            rescan(pool),
            `seed ${seed}, op ${op}`,
          );
        }
      }
      assert.ok(resumedPastZero > 10, `seed ${seed}: the watch rarely held a chain (${resumedPastZero})`);
    }
  });

  it("starts over for a new owner and forgets everything on clear", () => {
    const pool = newPool();
    for (let i = 0; i < 3; i++) pool.register(pool.allocate(), chainHash(i), -1, prompt, 0, null);
    resume(pool, {});
    assert.equal(pool.watch.count, 3);
    assert.equal(pool.watch.freeHits, 0);
    const other = {};
    pool.watch.follow(other, CHAIN);
    assert.equal(pool.watch.owner, other);
    assert.equal(pool.watch.count, 0);
    resume(pool, other);
    assert.equal(pool.watch.count, 3);
    pool.watch.clear();
    assert.equal(pool.watch.owner, null);
    assert.equal(pool.watch.has(pool.lookup(chainHash(0))), false);
  });
});
