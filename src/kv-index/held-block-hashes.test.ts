import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatMessageLike } from "../api/prompt.ts";
import { encodeChat } from "../tokenizer/chat.ts";
import { IncrementalEncoder } from "../tokenizer/incremental.ts";
import { loadTokenizer } from "../tokenizer/registry.ts";
import { hashPrefixBlocks, prefixSeed } from "./block-hasher.ts";
import { heldPrefixBlocks } from "./held-block-hashes.ts";

const llama = loadTokenizer("llama3.1");
const WORDS = ["cache", " block", " route", " replica", "\n\n", " 42", " naïve", "ꙮ", " prefix", "  "];
const SEEDS = [prefixSeed("model-a"), prefixSeed("model-a", "salt"), prefixSeed("model-b")];
/** Block sizes and block limits the prefix producers may ask for. */
const SHAPES = [
  { blockSizeTokens: 4, maxBlocks: Number.POSITIVE_INFINITY },
  { blockSizeTokens: 16, maxBlocks: Number.POSITIVE_INFINITY },
  { blockSizeTokens: 64, maxBlocks: 3 },
];

/** A deterministic generator (a linear congruential one), so a failure replays. */
function randomFrom(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

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
  const random = randomFrom(11);
  const text = () => Array.from({ length: 5 + random(60) }, () => WORDS[random(WORDS.length)]).join("");
  const conversations: ChatMessageLike[][] = [[{ role: "system", content: "You are terse." }]];
  const prompts: { tokens: Uint32Array; copy: Uint32Array }[] = [];
  for (let turn = 0; turn < 160; turn++) {
    const base = conversations[random(conversations.length)]!;
    const kind = random(4);
    let next: ChatMessageLike[];
    if (kind === 0)
      next = base; // the same prompt again
    else if (kind === 1 && base.length > 1) {
      // An earlier message edited, the later ones kept.
      const at = 1 + random(base.length - 1);
      next = base.map((m, i) => (i === at ? { role: m.role, content: text() } : m));
    } else {
      // The next turn, or a fork after one of the messages.
      const kept = kind === 2 ? base.slice(0, 1 + random(base.length)) : base;
      next = [...kept, { role: "assistant", content: text() }, { role: "user", content: text() }];
    }
    const tokens = encoder.encodeChatHere(next);
    assert.deepEqual(tokens, encodeChat(llama, next), `turn ${turn}: token for token`);
    assertSameKeys(tokens, `turn ${turn}`);
    prompts.push({ tokens, copy: Uint32Array.from(tokens) });
    conversations.push(next);
  }
  assert.ok(encoder.trie.bytes <= 24 * 1024, "evictions happened within the budget");
  prompts.forEach(({ tokens, copy }, turn) => {
    assert.deepEqual(tokens, copy, `turn ${turn}'s ids are unchanged by the turns after it`);
    assertSameKeys(tokens, `turn ${turn}, again at the end`);
  });
});
