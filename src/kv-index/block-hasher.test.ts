import assert from "node:assert/strict";
import { test } from "node:test";
import { seededRandom } from "../core/random.ts";
import { defaultTokenizer } from "../tokenizer/tokenizer.ts";
import {
  blockCount,
  HASH_LANES,
  hashPrefixBlocks,
  hashTextBlocks,
  prefixSeed,
  resumeTextBlocks,
} from "./block-hasher.ts";

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

test("text blocks are blockSizeTokens × 4 characters: a shared text prefix shares exactly its whole blocks", () => {
  const head = "h".repeat(64 * 3 + 10); // 3 whole blocks of 16 tokens (64 chars), then 10 more
  const a = hashTextBlocks(`${head}alpha${"y".repeat(200)}`, 16, 100, seed);
  const b = hashTextBlocks(`${head}beta!${"y".repeat(200)}`, 16, 100, seed);
  assert.equal(a.length, Math.ceil((head.length + 205) / 64));
  assert.deepEqual(a.slice(0, 3), b.slice(0, 3));
  for (let i = 3; i < a.length; i++) assert.notEqual(a[i], b[i]);
  assert.equal(hashTextBlocks("q".repeat(64 * 10), 16, 4, seed).length, 4);
  assert.deepEqual(
    hashTextBlocks("q".repeat(64 * 10), 16, 4, seed),
    hashTextBlocks("q".repeat(64 * 4), 16, 4, seed),
  );
});

test("text hashing sees every code unit: odd lengths, trailing NULs, non-Latin text and salts differ", () => {
  const key = (text: string, s = seed) => hashTextBlocks(text, 16, 100, s).at(-1);
  const variants = ["abc", "abc\u0000", "abcd", "abcé", "ab\u{1F600}", "ab\uD83D", "", "a".repeat(65)];
  const keys = variants.map((v) => key(v));
  assert.equal(new Set(keys).size, variants.length);
  assert.equal(hashTextBlocks("", 16, 100, seed).length, 0);
  assert.notEqual(key("abc", prefixSeed("model-a", "salt")), key("abc"));
  // Sliced and concatenated strings hash like their flat equivalents.
  assert.equal(key(`${"x".repeat(100)}abcé`.slice(100)), key("abcé"));
  assert.equal(key(`${["a", "b", "c"].join("")}é`), key("abcé"));
});

test("no collisions among 200 000 distinct random blocks, and keys stay 53-bit integers", () => {
  let state = 12345;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) | 0;
    return state >>> 16;
  };
  const seen = new Set<number>();
  const text = new Array<string>(64);
  for (let n = 0; n < 200_000; n++) {
    for (let i = 0; i < 64; i++) text[i] = String.fromCharCode(32 + (next() % 95));
    const [k] = hashTextBlocks(text.join(""), 16, 1, seed);
    assert.ok(Number.isSafeInteger(k) && k! >= 0);
    seen.add(k!);
  }
  assert.equal(seen.size, 200_000);
});

test("pieces hash exactly like their concatenation, whatever the cut points", () => {
  const whole = `${"réponse ".repeat(100)}\u{1F600}${"z".repeat(77)}`;
  const cuts = [[], [1], [63, 64, 65], [5, 300, 301, 700], [whole.length - 1]];
  for (const at of cuts) {
    const pieces = [0, ...at, whole.length]
      .slice(1)
      .map((end, i, ends) => whole.slice(i ? ends[i - 1] : 0, end));
    assert.deepEqual(
      hashTextBlocks(["", ...pieces, ""], 16, 100, seed),
      hashTextBlocks(whole, 16, 100, seed),
    );
    assert.deepEqual(hashTextBlocks(pieces, 16, 3, seed), hashTextBlocks(whole, 16, 3, seed));
  }
});

test("ASCII byte pieces hash like the same text as strings, at any cut, parity and byte offset", () => {
  const random = seededRandom(5);
  const ascii = (n: number) =>
    Array.from({ length: n }, () => String.fromCharCode(32 + Math.floor(random() * 95))).join("");
  for (let round = 0; round < 50; round++) {
    const texts = Array.from({ length: 1 + Math.floor(random() * 5) }, () =>
      ascii(Math.floor(random() * 900)),
    );
    // Bytes at an odd offset of a larger buffer, as a string value sits inside a request body.
    const pieces = texts.map((t, i) =>
      i % 2 === round % 2 ? t : Buffer.from(`{${t}}`, "latin1").subarray(1, t.length + 1),
    );
    const whole = texts.join("");
    for (const maxBlocks of [1000, 3])
      assert.deepEqual(
        hashTextBlocks(pieces, 16, maxBlocks, seed),
        hashTextBlocks(whole, 16, maxBlocks, seed),
      );
  }
});

test("a text hashed in two parts, resumed from the recorded state, has the keys of one call", () => {
  const random = seededRandom(17);
  const seed = prefixSeed("m", "salt");
  for (let trial = 0; trial < 40; trial++) {
    const length = 1 + Math.floor(random() * 20_000);
    const text = Array.from({ length }, () => String.fromCharCode(32 + Math.floor(random() * 2000))).join("");
    const cut = Math.floor(random() * length);
    const pieces = [text.slice(0, cut), text.slice(cut)];
    const blockSizeTokens = [1, 16, 64][trial % 3]!;
    const whole = hashTextBlocks(text, blockSizeTokens, Number.POSITIVE_INFINITY, seed);
    const blocks = whole.length;
    const half = Math.floor(random() * (blocks + 1));
    const keys = new Float64Array(blocks);
    const lanes = new Int32Array(Math.max(1, half) * HASH_LANES);
    resumeTextBlocks(pieces, blockSizeTokens, { first: 0, blocks: half, seed, keys, lanes, record: true });
    resumeTextBlocks(pieces, blockSizeTokens, { first: half, blocks, seed, keys, lanes, record: false });
    assert.deepEqual(
      [...keys],
      [...whole],
      `length ${length}, ${blockSizeTokens}-token blocks, cut at block ${half}`,
    );
  }
});
