import assert from "node:assert/strict";
import { test } from "node:test";
import { defaultTokenizer } from "../tokenizer/tokenizer.ts";
import { blockCount, hashPrefixBlocks, prefixSeed } from "./block-hasher.ts";

const seed = prefixSeed("model-a");

test("block count includes the trailing partial block", () => {
  assert.equal(blockCount(0, 64), 0);
  assert.equal(blockCount(64, 64), 1);
  assert.equal(blockCount(65, 64), 2);
});

test("shared token prefixes give shared leading hashes, then diverge for good", () => {
  const a = defaultTokenizer.encode(`${"x".repeat(512)}tail-one${"y".repeat(300)}`);
  const b = defaultTokenizer.encode(`${"x".repeat(512)}tail-two${"y".repeat(300)}`);
  const ha = hashPrefixBlocks(a, 16, 100, seed);
  const hb = hashPrefixBlocks(b, 16, 100, seed);
  assert.equal(ha.length, blockCount(a.length, 16));
  assert.deepEqual(ha.slice(0, 8), hb.slice(0, 8));
  // Chaining: equal later blocks still differ once an earlier block differed.
  for (let i = 8; i < ha.length; i++) assert.notEqual(ha[i], hb[i]);
  for (const h of ha) assert.ok(Number.isSafeInteger(h) && h >= 0);
});

test("model and cache salt change every hash; the cap limits the blocks", () => {
  const tokens = defaultTokenizer.encode("z".repeat(1000));
  const base = hashPrefixBlocks(tokens, 16, 100, seed);
  const salted = hashPrefixBlocks(tokens, 16, 100, prefixSeed("model-a", "salt"));
  const other = hashPrefixBlocks(tokens, 16, 100, prefixSeed("model-b"));
  assert.notEqual(base[0], salted[0]);
  assert.notEqual(base[0], other[0]);
  assert.equal(hashPrefixBlocks(tokens, 16, 3, seed).length, 3);
  assert.deepEqual(hashPrefixBlocks(tokens, 16, 100, seed), base);
});

test("hashes a token subarray by its own bytes", () => {
  const tokens = defaultTokenizer.encode("q".repeat(256) + "r".repeat(256));
  const whole = hashPrefixBlocks(tokens.subarray(64), 16, 10, seed);
  const copy = hashPrefixBlocks(tokens.slice(64), 16, 10, seed);
  assert.deepEqual(whole, copy);
});
