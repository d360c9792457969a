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

test("ids are FNV-1a of each chunk's code units, across scratch refills and for any text", () => {
  const fnv = (chunk: string) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < chunk.length; i++) h = Math.imul(h ^ chunk.charCodeAt(i), 0x01000193);
    return h >>> 0;
  };
  // Past one 65 536-token scratch fill, with non-Latin units, a surrogate pair and a short tail.
  const text = `${"héllo wörld ∑ ".repeat(20_000)}\u{1F600}tail!`;
  const ids = tok.encode(text);
  assert.equal(ids.length, Math.ceil(text.length / 4));
  for (let t = 0; t < ids.length; t++) {
    if (ids[t] !== fnv(text.slice(t * 4, t * 4 + 4))) assert.fail(`token ${t} differs`);
  }
  assert.deepEqual(tok.encode(text.slice(0, 12)), ids.slice(0, 3));
});

test("encodeText of pieces (strings and ASCII bytes) equals encode of their concatenation, past a scratch fill", () => {
  let state = 3;
  const random = (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return (state >>> 8) % n;
  };
  const ascii = (n: number) => Array.from({ length: n }, () => String.fromCharCode(32 + random(95))).join("");
  for (const total of [0, 3, 4, 1001, 300_003]) {
    const pieces: (string | Uint8Array)[] = [];
    let joined = "";
    while (joined.length < total) {
      const n = Math.min(total - joined.length, random(2) ? 1 + random(7) : 1 + random(40_000));
      const text = random(3) === 0 ? `ꙮ${ascii(n - 1)}`.slice(0, n) : ascii(n);
      pieces.push(/^[\x20-\x7e]*$/.test(text) && random(2) ? Buffer.from(text, "latin1") : text);
      joined += text;
    }
    assert.deepEqual(tok.encodeText(pieces), tok.encode(joined), `${total} code units`);
  }
});
