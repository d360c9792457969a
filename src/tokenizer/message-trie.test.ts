import assert from "node:assert/strict";
import { test } from "node:test";
import type { MessageText } from "./chat.ts";
import { MessageTrie } from "./message-trie.ts";

const user = (text: string): MessageText => ({ role: "user", text });
const ids = (...values: number[]) => Uint32Array.from(values);

/** Adds a conversation after the longest prefix already held; each message's ids are its index. */
function hold(trie: MessageTrie, messages: MessageText[]): void {
  const path = trie.match(messages);
  const fresh = messages.slice(path.length);
  trie.extend(
    path,
    fresh,
    fresh.map((_, k) => ids(path.length + k)),
  );
}

test("a turn matches the held messages it starts with, compared by role and text, not by length alone", () => {
  const trie = new MessageTrie(1000);
  hold(trie, [user("system"), user("aaaa"), user("bbbb")]);
  assert.equal(trie.size, 3);
  assert.equal(trie.bytes, (6 + 4 + 4) * 2 + 3 * 4); // texts at 2 bytes a unit, one id each
  const next = [user("system"), user("aaaa"), user("bbbb"), user("cccc")];
  assert.deepEqual(
    trie.match(next).map((n) => n.text),
    ["system", "aaaa", "bbbb"],
  );
  assert.equal(trie.match([user("system"), user("aaab")]).length, 1, "same length, other text");
  assert.equal(trie.match([{ role: "assistant", text: "system" }]).length, 0, "same text, other role");
  assert.equal(trie.match([user("aaaa")]).length, 0, "a message is held at its position only");
});

test("conversations share the messages they start with; a fork adds only what differs", () => {
  const trie = new MessageTrie(1000);
  hold(trie, [user("system"), user("question one"), user("answer")]);
  hold(trie, [user("system"), user("question two")]);
  assert.equal(trie.size, 4);
  const [system] = trie.match([user("system")]);
  assert.equal(system!.children.get("question one".length)!.length, 2, "one length, two siblings");
  assert.deepEqual(Array.from(trie.match([user("system"), user("question two")])[1]!.ids), [1]);
});

test("the least recently used messages go first, leaves before the messages they follow", () => {
  const trie = new MessageTrie(3 * 12); // three one-id messages of four units
  hold(trie, [user("root"), user("aaaa")]);
  hold(trie, [user("root"), user("bbbb")]);
  assert.equal(trie.size, 3);
  hold(trie, [user("root"), user("aaaa")]); // a is now more recent than b
  hold(trie, [user("root"), user("aaaa"), user("cccc")]); // over budget: b, the oldest leaf, goes
  assert.equal(trie.size, 3);
  assert.equal(trie.bytes, 36);
  assert.equal(trie.match([user("root"), user("bbbb")]).length, 1);
  assert.equal(trie.match([user("root"), user("aaaa"), user("cccc")]).length, 3);
  hold(trie, [user("dddd")]); // root is more recent than its leaf c: c goes, then a
  assert.equal(trie.match([user("root"), user("aaaa"), user("cccc")]).length, 2);
  assert.equal(trie.size, 3);
});

test("nothing hangs on an evicted message, and a message over the budget is not held", () => {
  const trie = new MessageTrie(2 * 12);
  hold(trie, [user("root"), user("aaaa")]);
  const path = trie.match([user("root"), user("aaaa")]);
  hold(trie, [user("bbbb"), user("cccc")]); // root and a go
  assert.equal(path[1]!.held, false);
  trie.extend(path, [user("dddd")], [ids(2)]);
  assert.equal(trie.size, 2, "added to nothing");
  assert.equal(trie.match([user("root")]).length, 0);
  hold(trie, [user("x".repeat(20)), user("eeee")]);
  assert.equal(trie.match([user("x".repeat(20))]).length, 0);
  assert.equal(trie.match([user("bbbb"), user("cccc")]).length, 2, "the big one evicted nothing");
});

test("two turns tokenized at once: the second to finish reuses the messages the first added", () => {
  const trie = new MessageTrie(1000);
  hold(trie, [user("root")]);
  const turn = [user("root"), user("aaaa"), user("bbbb")];
  const path = trie.match(turn);
  hold(trie, turn);
  assert.equal(trie.size, 3);
  trie.extend(path, turn.slice(1), [ids(7), ids(8)]);
  assert.equal(trie.size, 3);
  assert.deepEqual(Array.from(trie.match(turn)[2]!.ids), [2], "the first one's ids");
});
