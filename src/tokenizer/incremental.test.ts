import assert from "node:assert/strict";
import { test } from "node:test";
import type { ChatMessageLike } from "../api/prompt.ts";
import { encodeChat } from "./chat.ts";
import { IncrementalEncoder } from "./incremental.ts";
import { loadTokenizer } from "./registry.ts";

const llama = loadTokenizer("llama3.1");
const WORDS = [
  "cache",
  "block",
  "route",
  " replica",
  "prefix",
  "\n\n",
  "42",
  "naïve",
  "ꙮ",
  "<|eot_id|>",
  "  ",
];

/** A deterministic generator (a linear congruential one), so a failure replays. */
function randomFrom(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

test("turns that extend, fork and revisit conversations under a small budget get the whole prompt's ids", () => {
  const encoder = new IncrementalEncoder("llama3.1", 4096);
  const random = randomFrom(7);
  const text = () => Array.from({ length: 1 + random(12) }, () => WORDS[random(WORDS.length)]).join("");
  const conversations: ChatMessageLike[][] = [[{ role: "system", content: "You are terse." }]];
  for (let turn = 0; turn < 200; turn++) {
    const base = conversations[random(conversations.length)]!;
    // Extend the whole conversation, or fork it after one of its messages.
    const kept = random(3) === 0 ? base.slice(0, 1 + random(base.length)) : base;
    // The new message: new text, or the text that followed in `base` under either role.
    const after = base[kept.length];
    const content = after && random(2) === 0 ? after.content : text();
    const next = [...kept, { role: random(2) === 0 ? "assistant" : "user", content }];
    assert.deepEqual(encoder.encodeChatHere(next), encodeChat(llama, next), `turn ${turn}`);
    conversations.push(next);
    assert.ok(encoder.trie.bytes <= 4096);
  }
  assert.ok(encoder.trie.size > 10, "held messages across conversations");
});
