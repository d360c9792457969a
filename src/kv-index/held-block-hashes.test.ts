import assert from "node:assert/strict";
import { test } from "node:test";
import { encodeChat } from "../tokenizer/chat.ts";
import { IncrementalEncoder } from "../tokenizer/incremental.ts";
import { loadTokenizer } from "../tokenizer/registry.ts";
import { randomFrom, randomTurns } from "../tokenizer/testing.ts";
import { hashPrefixBlocks, prefixSeed } from "./block-hasher.ts";
import { heldPrefixBlocks } from "./held-block-hashes.ts";

const llama = loadTokenizer("llama3.1");
const SEEDS = [prefixSeed("model-a"), prefixSeed("model-a", "salt"), prefixSeed("model-b")];
/** Block sizes and block limits the prefix producers may ask for. */
const SHAPES = [
  { blockSizeTokens: 4, maxBlocks: Number.POSITIVE_INFINITY },
  { blockSizeTokens: 16, maxBlocks: Number.POSITIVE_INFINITY },
  { blockSizeTokens: 64, maxBlocks: 3 },
];

/** Every seed and shape's keys of `tokens`, held and from scratch (a plain copy of the ids). */
function assertSameKeys(tokens: Uint32Array, label: string): void {
  const plain = Uint32Array.from(tokens);
  for (const seed of SEEDS)
    for (const { blockSizeTokens, maxBlocks } of SHAPES)
      assert.deepEqual(
        heldPrefixBlocks(tokens, blockSizeTokens, maxBlocks, seed),
        hashPrefixBlocks(plain, blockSizeTokens, maxBlocks, seed),
        `${label}, ${blockSizeTokens}-token blocks`,
      );
}

test("held conversations' keys equal keys from scratch across continued turns, forks, edits, revisits and evictions", () => {
  const encoder = new IncrementalEncoder("llama3.1", 24 * 1024);
  const nextTurn = randomTurns(randomFrom(11));
  const prompts: { tokens: Uint32Array; copy: Uint32Array }[] = [];
  for (let turn = 0; turn < 160; turn++) {
    const next = nextTurn();
    const tokens = encoder.encodeChatHere(next);
    assert.deepEqual(tokens, encodeChat(llama, next), `turn ${turn}: token for token`);
    assertSameKeys(tokens, `turn ${turn}`);
    prompts.push({ tokens, copy: Uint32Array.from(tokens) });
  }
  assert.ok(encoder.trie.bytes <= 24 * 1024, "evictions happened within the budget");
  prompts.forEach(({ tokens, copy }, turn) => {
    assert.deepEqual(tokens, copy, `turn ${turn}'s ids are unchanged by the turns after it`);
    assertSameKeys(tokens, `turn ${turn}, again at the end`);
  });
});
