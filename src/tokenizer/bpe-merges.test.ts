import assert from "node:assert/strict";
import { test } from "node:test";
import { BpeMerges } from "./bpe-merges.ts";
import { byteLevelCharacter } from "./byte-level.ts";

/** A vocabulary of the 256 byte characters (id = byte) plus `tokens` from id 256 on. */
function vocabulary(...tokens: string[]): Map<string, number> {
  const vocab = new Map<string, number>();
  for (let byte = 0; byte < 256; byte++) vocab.set(byteLevelCharacter(byte), byte);
  for (const token of tokens) vocab.set(token, vocab.size);
  return vocab;
}

function encode(merges: BpeMerges, word: string): number[] {
  const out: number[] = [];
  merges.encode(word, out);
  return out;
}

test("the lowest-ranked pair merges first, the leftmost of equal pairs, until none merges", () => {
  const vocab = vocabulary("ab", "bc", "abc", "aa");
  const merges = BpeMerges.of(
    [
      ["b", "c"],
      ["a", "b"],
      ["a", "bc"],
      ["a", "a"],
    ],
    vocab,
    false,
  )!;
  const id = (token: string) => vocab.get(token)!;
  assert.deepEqual(encode(merges, "abc"), [id("abc")]); // b+c (rank 0) before a+b (rank 1), then a+bc
  assert.deepEqual(encode(merges, "abab"), [id("ab"), id("ab")]);
  assert.deepEqual(encode(merges, "aaa"), [id("aa"), id("a")]); // leftmost first
  assert.deepEqual(encode(merges, "xa"), [id("x"), id("a")]);
  assert.deepEqual(encode(merges, "é"), [0xc3, 0xa9]); // UTF-8 bytes, no merge
  assert.deepEqual(encode(merges, "a".repeat(100)), Array(50).fill(id("aa")));
});

test("with ignoreMerges a word that is a token is that token, even where merges would not make it", () => {
  const vocab = vocabulary("ab", "abc");
  const merges = [["a", "b"]] as [string, string][];
  assert.deepEqual(encode(BpeMerges.of(merges, vocab, true)!, "abc"), [vocab.get("abc")]);
  assert.deepEqual(encode(BpeMerges.of(merges, vocab, false)!, "abc"), [vocab.get("ab"), vocab.get("c")]);
});

test("a merge whose tokens are not in the vocabulary leaves the model to the library", () => {
  assert.equal(BpeMerges.of([["a", "b"]], vocabulary(), false), null);
  const noBytes = vocabulary("ab");
  noBytes.delete(byteLevelCharacter(0x41));
  assert.equal(BpeMerges.of([["a", "b"]], noBytes, false), null);
});
