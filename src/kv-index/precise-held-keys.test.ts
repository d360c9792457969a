import assert from "node:assert/strict";
import { test } from "node:test";
import { type ChatMessageLike, renderChat } from "../api/prompt.ts";
import { Char4Conversations } from "../tokenizer/char4-conversations.ts";
import { isAppendOnly } from "../tokenizer/conversation-ids.ts";
import { IncrementalEncoder } from "../tokenizer/incremental.ts";
import { randomFrom, randomTurns } from "../tokenizer/testing.ts";
import { CharChunkTokenizer } from "../tokenizer/tokenizer.ts";
import { WorkerEncoder } from "../tokenizer/worker-encoder.ts";
import { type IndexKvEvent, PreciseIndex } from "./precise-index.ts";
import { RequestKeyHasher } from "./request-keys.ts";

const MODELS = ["model-a", "model-b"];
const PODS = ["a", "b", "c"];

/** The engine's events storing blocks `[from, to)` of a prompt whose request keys are `keys` (engine block = request block). */
function stored(
  tokens: Uint32Array,
  keys: Float64Array,
  from: number,
  to: number,
  size: number,
): IndexKvEvent[] {
  return [
    {
      type: "BlockStored",
      blockHashes: Array.from(keys.subarray(from, to), (k) => BigInt(k)),
      parentBlockHash: from === 0 ? null : BigInt(keys[from - 1]!),
      tokenIds: Array.from(tokens.subarray(from * size, to * size)),
      blockSize: size,
      lora: null,
      medium: "GPU",
    },
  ];
}

/**
 * For 16- and 64-token blocks, a seeded walk of 120 turns through `encode` (`encoder`'s, whose
 * cache must stay in budget): held request keys equal keys from scratch, and matches are those of
 * plain copies.
 */
async function walk(
  encoder: { readonly trie: { readonly bytes: number } },
  encode: (messages: ChatMessageLike[]) => Uint32Array | Promise<Uint32Array>,
  indexBytes = 6_000,
): Promise<void> {
  for (const blockSizeTokens of [16, 64]) {
    const options = { blockSizeTokens, maxBytes: indexBytes, speculativeTtlMs: 5 };
    // The same operations on two indexes: one given the conversations' append-only views, one plain copies.
    const held = new PreciseIndex(options);
    const plain = new PreciseIndex(options);
    const hasher = new RequestKeyHasher(blockSizeTokens);
    const random = randomFrom(blockSizeTokens);
    const nextTurn = randomTurns(random);
    for (let turn = 0; turn < 120; turn++) {
      const next = nextTurn();
      const tokens = await encode(next);
      assert.ok(isAppendOnly(tokens), "a view of the conversation's array: the held path");
      const copy = Uint32Array.from(tokens);
      const model = MODELS[random(MODELS.length)]!;
      const fresh = hasher.keys(copy, model);
      const label = `${blockSizeTokens}-token blocks, turn ${turn}`;
      const a = held.matchTokens(tokens, model, PODS, turn);
      const b = plain.matchTokens(copy, model, PODS, turn);
      assert.deepEqual([...a.keys], [...fresh.subarray(0, a.keys.length)], `${label}: keys`);
      assert.deepEqual(
        [[...a.keys], [...a.blocks], [...a.weighted]],
        [[...b.keys], [...b.blocks], [...b.weighted]],
        `${label}: match`,
      );
      const pod = PODS[random(PODS.length)]!;
      const op = random(4);
      if (op === 0) {
        held.insertSpeculative(tokens, model, pod, turn, a.keys);
        plain.insertSpeculative(copy, model, pod, turn, b.keys);
      } else if (op === 1) {
        const from = random(2) ? 0 : random(fresh.length + 1);
        const events = stored(copy, fresh, from, fresh.length, blockSizeTokens);
        held.apply(events, pod, model, turn);
        plain.apply(events, pod, model, turn);
      } else if (op === 2 && random(4) === 0) {
        held.clearPod(pod);
        plain.clearPod(pod);
      }
      assert.deepEqual(held.stats(), plain.stats(), `${label}: index`);
      // A pod that holds the whole prompt: its match keys every block, held or not.
      held.insertSpeculative(tokens, model, "whole", turn);
      plain.insertSpeculative(copy, model, "whole", turn);
      const all = held.matchTokens(tokens, model, ["whole"], turn);
      assert.deepEqual([...all.keys], [...fresh], `${label}: every key`);
      assert.deepEqual([...all.blocks], [...plain.matchTokens(copy, model, ["whole"], turn).blocks]);
      held.clearPod("whole");
      plain.clearPod("whole");
    }
    assert.ok(held.stats().evictedBlocks > 0, "the index evicted");
    assert.ok(encoder.trie.bytes <= 24 * 1024, "the tokenizer evicted within its budget");
  }
}

test("held request keys equal keys from scratch, and matches are those of the same prompts as plain arrays, across continued turns, forks, edits and evictions", async () => {
  const encoder = new IncrementalEncoder("llama3.1", 24 * 1024);
  await walk(encoder, (messages) => encoder.encodeChatHere(messages));
});

test("the same for the stand-in's held conversations (Char4Conversations)", async () => {
  const conversations = new Char4Conversations(new CharChunkTokenizer(), 24 * 1024);
  // A smaller index, so that this walk's index evicts too.
  await walk(
    conversations,
    (messages) => conversations.encodeChat(messages, renderChat(messages).length)!,
    2_000,
  );
});

test("the same through the encode worker, which builds the forks', outgrown and new conversations' arrays", async () => {
  const encoder = new IncrementalEncoder("llama3.1", 24 * 1024);
  const worker = new WorkerEncoder("llama3.1");
  encoder.useWorker(worker);
  try {
    await walk(encoder, (messages) => encoder.encodeChat(messages));
  } finally {
    await worker.close();
  }
});
