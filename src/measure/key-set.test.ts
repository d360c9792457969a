import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seededRandom } from "../core/random.ts";
import { KeySet } from "./key-set.ts";

describe("KeySet", () => {
  it("agrees with a Set over 300,000 random 40-bit keys, through several growths", () => {
    const random = seededRandom(7);
    const keys = new KeySet();
    const reference = new Set<number>();
    for (let i = 0; i < 300_000; i++) {
      // Draw from a small pool half the time so repeats are frequent.
      const key = random() < 0.5 ? Math.floor(random() * 2 ** 40) : Math.floor(random() * 5000) * 2 ** 28;
      assert.equal(keys.add(key), !reference.has(key), `key ${key}`);
      reference.add(key);
    }
    assert.equal(keys.size, reference.size);
  });

  it("tells keys apart that differ only above bit 32, and keeps 0 and 2^40 - 1", () => {
    const keys = new KeySet();
    for (const key of [0, 5, 5 + 2 ** 32, 5 + 2 ** 39, 2 ** 40 - 1]) assert.equal(keys.add(key), true);
    for (const key of [0, 5, 5 + 2 ** 32, 5 + 2 ** 39, 2 ** 40 - 1]) assert.equal(keys.add(key), false);
    assert.equal(keys.size, 5);
  });
});
