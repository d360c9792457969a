import assert from "node:assert/strict";
import { test } from "node:test";
import { type ChatMessageLike, renderChat } from "../api/prompt.ts";
import { encodeChat } from "../tokenizer/chat.ts";
import { Char4Conversations } from "../tokenizer/char4-conversations.ts";
import { IncrementalEncoder } from "../tokenizer/incremental.ts";
import { loadTokenizer } from "../tokenizer/registry.ts";
import { randomFrom, randomTurns } from "../tokenizer/testing.ts";
import { CharChunkTokenizer } from "../tokenizer/tokenizer.ts";
import { WorkerEncoder } from "../tokenizer/worker-encoder.ts";
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

/** A chat prompt's ids from the incremental encoder, on this thread or its worker. */
type Encode = (messages: ChatMessageLike[]) => Uint32Array | Promise<Uint32Array>;

/**
 * A seeded walk of 160 turns that continue, fork, edit and revisit conversations, `together` at a
 * time: every prompt's ids equal the tokenizer's from scratch and its keys those of a plain copy,
 * and no prompt's ids change later.
 */
async function walk(encoder: IncrementalEncoder, encode: Encode, together: () => number): Promise<void> {
  const nextTurn = randomTurns(randomFrom(11));
  const prompts: { tokens: Uint32Array; copy: Uint32Array }[] = [];
  for (let turn = 0; turn < 160; ) {
    const batch = Array.from({ length: together() }, () => nextTurn());
    const all = await Promise.all(batch.map(encode));
    all.forEach((tokens, k) => {
      assert.deepEqual(tokens, encodeChat(llama, batch[k]!), `turn ${turn}: token for token`);
      assertSameKeys(tokens, `turn ${turn}`);
      prompts.push({ tokens, copy: Uint32Array.from(tokens) });
      turn++;
    });
  }
  assert.ok(encoder.trie.bytes <= 24 * 1024, "evictions happened within the budget");
  prompts.forEach(({ tokens, copy }, turn) => {
    assert.deepEqual(tokens, copy, `turn ${turn}'s ids are unchanged by the turns after it`);
    assertSameKeys(tokens, `turn ${turn}, again at the end`);
  });
}

test("held conversations' keys equal keys from scratch across continued turns, forks, edits, revisits and evictions", async () => {
  const encoder = new IncrementalEncoder("llama3.1", 24 * 1024);
  await walk(
    encoder,
    (messages) => encoder.encodeChatHere(messages),
    () => 1,
  );
});

test("with the worker building forks', outgrown and new conversations' arrays, turns one to three at a time get the same ids and keys", async () => {
  const encoder = new IncrementalEncoder("llama3.1", 24 * 1024);
  const worker = new WorkerEncoder("llama3.1");
  encoder.useWorker(worker);
  const random = randomFrom(5);
  try {
    await walk(
      encoder,
      (messages) => encoder.encodeChat(messages),
      () => 1 + random(3),
    );
  } finally {
    await worker.close();
  }
});

test("the stand-in's held conversations (Char4Conversations): keys equal keys from scratch over the same walk", () => {
  const conversations = new Char4Conversations(new CharChunkTokenizer(), 24 * 1024);
  const nextTurn = randomTurns(randomFrom(11));
  const prompts: Uint32Array[] = [];
  for (let turn = 0; turn < 160; turn++) {
    const messages = nextTurn();
    const tokens = conversations.encodeChat(messages, renderChat(messages).length)!;
    assertSameKeys(tokens, `turn ${turn}`);
    prompts.push(tokens);
  }
  prompts.forEach((tokens, turn) => {
    assertSameKeys(tokens, `turn ${turn}, again at the end`);
  });
});
