import assert from "node:assert/strict";
import { test } from "node:test";
import { CharChunkTokenizer } from "./tokenizer.ts";

const tok = new CharChunkTokenizer();

test("one token per four characters, last one partial", () => {
  for (const [text, n] of [
    ["", 0],
    ["abc", 1],
    ["abcd", 1],
    ["abcde", 2],
    ["x".repeat(4000), 1000],
  ] as const) {
    assert.equal(tok.encode(text).length, n, text.slice(0, 10));
    assert.equal(tok.count(text), n);
  }
});

test("a shared text prefix of whole chunks gives a shared token prefix", () => {
  const a = tok.encode("the cat sat on the mat");
  const b = tok.encode("the cat sat on a hat!");
  assert.deepEqual(a.slice(0, 3), b.slice(0, 3));
  assert.notEqual(a[3], b[3]);
});

test("distinct chunks map to distinct ids", () => {
  const ids = tok.encode("aaaabbbbccccdddd");
  assert.equal(new Set(ids).size, 4);
});
