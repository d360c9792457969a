import assert from "node:assert/strict";
import { test } from "node:test";
import type { MessageText } from "./chat.ts";
import { ConversationIds } from "./conversation-ids.ts";
import { type MessageNode, MessageTrie } from "./message-trie.ts";

const user = (text: string): MessageText => ({ role: "user", text });
const ids = (...values: number[]) => Uint32Array.from(values);
/** A held message's own ids. */
const segment = (n: MessageNode) => Array.from(n.ids.view(n.end).subarray(n.start));

/**
 * Adds a conversation after the longest prefix already held, one id per message (`idOf` of its
 * text), written after the held ids when they continue there, else into an exact-size copy.
 */
function hold(trie: MessageTrie, messages: MessageText[], idOf = (m: MessageText) => m.text.charCodeAt(0)) {
  const path = trie.match(messages);
  const base = path[path.length - 1] ?? trie.root;
  const fresh = messages.slice(path.length);
  const parts = fresh.map((m) => ids(idOf(m)));
  let array = base.ids;
  if (array.append(base.end, parts) < 0) {
    array = new ConversationIds(base.end + fresh.length);
    array.append(0, [base.ids.view(base.end), ...parts]);
  }
  trie.extend(
    path,
    fresh,
    fresh.map((_, k) => ({ ids: array, start: base.end + k, end: base.end + k + 1 })),
  );
}

test("a turn matches the held messages it starts with, compared by role and text, not by length alone", () => {
  const trie = new MessageTrie(1000);
  hold(trie, [user("system"), user("aaaa"), user("bbbb")]);
  assert.equal(trie.size, 3);
  assert.equal(trie.bytes, (6 + 4 + 4) * 2 + 3 * 4); // texts at 2 bytes a unit, one array of 3 ids
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
  hold(trie, [user("system"), user("question two")], () => 9);
  assert.equal(trie.size, 4);
  const [system, two] = trie.match([user("system"), user("question two")]);
  assert.equal(system!.children.get("question one".length)!.length, 2, "one length, two siblings");
  assert.deepEqual(segment(two!), [9]);
  assert.deepEqual(Array.from(two!.ids.view(two!.end)), ["s".charCodeAt(0), 9], "the fork's own array");
  assert.equal(system!.ids, two!.ids, "the shared message reads the fork's array, which holds its ids too");
});

test("a conversation that outgrows its array moves to a copy with its new messages; the old array is let go", () => {
  const trie = new MessageTrie(1000);
  const conversation = [user("root"), user("aaaa")];
  hold(trie, conversation);
  const [root] = trie.match(conversation);
  const array = root!.ids;
  assert.equal(trie.bytes, 16 + 8);
  hold(trie, [...conversation, user("bbbb")]); // no room: copied, every message moves to the copy
  const path = trie.match([...conversation, user("bbbb")]);
  assert.ok(path.every((n) => n.ids === path[2]!.ids) && path[2]!.ids !== array);
  assert.equal(trie.bytes, 24 + 12, "the old array no longer counts");
  assert.deepEqual(Array.from(path[2]!.ids.view(3)), [114, 97, 98]);
});

test("the least recently used messages go first, leaves before the messages they follow", () => {
  const trie = new MessageTrie(48);
  hold(trie, [user("root"), user("aaaa")]);
  hold(trie, [user("root"), user("bbbb")]); // a fork: root moves to its array of 2
  assert.equal(trie.size, 3);
  assert.equal(trie.bytes, 3 * 8 + 8 + 8);
  hold(trie, [user("root"), user("aaaa")]); // a is now more recent than b
  hold(trie, [user("root"), user("aaaa"), user("cccc")]); // over budget: b, the oldest leaf, goes
  assert.equal(trie.size, 3);
  assert.equal(trie.bytes, 3 * 8 + 12, "b's array went with it");
  assert.equal(trie.match([user("root"), user("bbbb")]).length, 1);
  assert.equal(trie.match([user("root"), user("aaaa"), user("cccc")]).length, 3);
  hold(trie, [user("dddd"), user("eeee")]); // root is more recent than its leaf c: c goes, then a
  assert.equal(trie.match([user("root"), user("aaaa"), user("cccc")]).length, 1);
  assert.equal(trie.size, 3);
  assert.equal(trie.bytes, 3 * 8 + 12 + 8, "root still reads the array of 3");
});

test("nothing hangs on an evicted message, and a message over the budget is not held", () => {
  const trie = new MessageTrie(24);
  hold(trie, [user("root"), user("aaaa")]);
  const path = trie.match([user("root"), user("aaaa")]);
  hold(trie, [user("bbbb"), user("cccc")]); // root and a go
  assert.equal(path[1]!.held, false);
  const other = new ConversationIds(3);
  other.append(0, [ids(1, 2, 3)]);
  trie.extend(path, [user("dddd")], [{ ids: other, start: 2, end: 3 }]);
  assert.equal(trie.size, 2, "added to nothing");
  assert.equal(trie.bytes, 24);
  assert.equal(trie.match([user("root")]).length, 0);
  hold(trie, [user("x".repeat(20)), user("eeee")]);
  assert.equal(trie.match([user("x".repeat(20))]).length, 0);
  assert.equal(trie.match([user("bbbb"), user("cccc")]).length, 2, "the big one evicted nothing");
  const held = trie.match([user("bbbb"), user("cccc")]);
  hold(trie, [user("bbbb"), user("cccc"), user("y".repeat(20))]);
  assert.ok(
    held.every((n) => n.ids === held[0]!.ids) && trie.bytes === 24,
    "nor moved the held ones to its array",
  );
});

test("two turns tokenized at once: the second to finish reuses the messages the first added", () => {
  const trie = new MessageTrie(1000);
  hold(trie, [user("root")]);
  const turn = [user("root"), user("aaaa"), user("bbbb")];
  const path = trie.match(turn);
  hold(trie, turn);
  assert.equal(trie.size, 3);
  const late = new ConversationIds(3);
  late.append(0, [path[0]!.ids.view(1), ids(7), ids(8)]);
  trie.extend(path, turn.slice(1), [
    { ids: late, start: 1, end: 2 },
    { ids: late, start: 2, end: 3 },
  ]);
  assert.equal(trie.size, 3);
  assert.deepEqual(segment(trie.match(turn)[2]!), [98], "the first one's ids");
});
