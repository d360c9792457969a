import assert from "node:assert/strict";
import { test } from "node:test";
import { type ChatMessageLike, renderChat } from "../api/prompt.ts";
import { Char4Conversations } from "./char4-conversations.ts";
import { isAppendOnly } from "./conversation-ids.ts";
import { randomFrom, randomTurns } from "./testing.ts";
import { CharChunkTokenizer } from "./tokenizer.ts";

const char4 = new CharChunkTokenizer();
const encode = (conversations: Char4Conversations, messages: ChatMessageLike[]) =>
  conversations.encodeChat(messages, renderChat(messages).length);

test("a seeded walk of continued, forked, edited and revisited conversations gets renderChat's ids, which never change later", () => {
  const conversations = new Char4Conversations(char4, 24 * 1024);
  const nextTurn = randomTurns(randomFrom(7));
  const prompts: { tokens: Uint32Array; copy: Uint32Array }[] = [];
  for (let turn = 0; turn < 300; turn++) {
    const messages = nextTurn();
    const tokens = encode(conversations, messages);
    assert.ok(tokens && isAppendOnly(tokens), `turn ${turn}: a view of a conversation's array`);
    assert.deepEqual(tokens, char4.encode(renderChat(messages)), `turn ${turn}: token for token`);
    prompts.push({ tokens, copy: Uint32Array.from(tokens) });
  }
  assert.ok(conversations.trie.bytes <= 24 * 1024, "evictions happened within the budget");
  prompts.forEach(({ tokens, copy }, turn) => {
    assert.deepEqual(tokens, copy, `turn ${turn} unchanged`);
  });
});

test("a next turn continues the conversation's array when the prompt before it ended on a chunk boundary, else copies it once", () => {
  const conversations = new Char4Conversations(char4, 1 << 20);
  // renderChat: "<|system|>\nab\n" (14 units) then "<|assistant|>\n" (14): 28 units, 7 whole chunks.
  const first: ChatMessageLike[] = [{ role: "system", content: "ab" }];
  const aligned = encode(conversations, first)!;
  const next = [...first, { role: "assistant", content: "cd" }, { role: "user", content: "ef" }];
  const continued = encode(conversations, next)!;
  assert.equal(continued.buffer, aligned.buffer, "written after the first prompt's ids, in place");
  assert.deepEqual(continued, char4.encode(renderChat(next)));
  // That prompt is 14 + 17 + 12 + 14 = 57 units: its last chunk is short, the next turn's is whole.
  const after = [...next, { role: "assistant", content: "f" }];
  const copied = encode(conversations, after)!;
  assert.notEqual(copied.buffer, continued.buffer);
  assert.deepEqual(copied, char4.encode(renderChat(after)));
  assert.deepEqual(continued, char4.encode(renderChat(next)), "the earlier prompt is untouched");
});

test("messages rendered to another length than the prompt's are not taken", () => {
  const conversations = new Char4Conversations(char4, 1 << 20);
  const messages = [{ role: "user", content: "hello" }];
  assert.equal(conversations.encodeChat(messages, renderChat(messages).length + 1), null);
  assert.equal(conversations.trie.size, 0);
});
