import assert from "node:assert/strict";
import { test } from "node:test";
import { Encoder } from "@msgpack/msgpack";
import { decodeBatch, hashToU64, parseTopic } from "./decode.ts";

const encoder = new Encoder({ useBigInt64: true });
const stored = (extra: unknown[] = []) => [
  "BlockStored",
  [1n, 2n],
  null,
  [5, 6, 7, 8],
  2,
  null,
  "CPU",
  null,
  ...extra,
];

test("positional and map events decode to the same events", () => {
  const positional = decodeBatch(
    encoder.encode([1.5, [stored(), ["BlockRemoved", [2n], "GPU", null], ["AllBlocksCleared"]], 3]),
  );
  const map = decodeBatch(
    encoder.encode([
      1.5,
      [
        {
          type: "BlockStored",
          block_hashes: [1n, 2n],
          parent_block_hash: null,
          token_ids: [5, 6, 7, 8],
          block_size: 2,
          medium: "CPU",
        },
        { type: "BlockRemoved", block_hashes: [2n], medium: "GPU" },
        { type: "AllBlocksCleared" },
      ],
      3,
    ]),
  );
  assert.deepEqual(positional, map);
  assert.deepEqual(positional.events[0], {
    type: "BlockStored",
    blockHashes: [1n, 2n],
    parentBlockHash: null,
    tokenIds: [5, 6, 7, 8],
    blockSize: 2,
    lora: null,
    medium: "CPU",
  });
  assert.equal(positional.dpRank, 3);
  assert.equal(positional.ts, 1.5);
});

test("SGLang sends positional events only; a batch without a rank is rank 0", () => {
  const batch = decodeBatch(
    encoder.encode([2, [{ type: "AllBlocksCleared" }, ["AllBlocksCleared"]]]),
    "sglang",
  );
  assert.deepEqual([batch.events.length, batch.skipped, batch.dpRank], [1, 1, 0]);
});

test("hashes: bytes use their last 8 bytes big-endian, negative int64 becomes uint64", () => {
  assert.equal(hashToU64(new Uint8Array([9, 9, 0, 0, 0, 0, 0, 0, 1, 2])), 0x0102n);
  assert.equal(hashToU64(new Uint8Array(Array(32).fill(0xff))), 0xffff_ffff_ffff_ffffn);
  assert.equal(hashToU64(-1n), 0xffff_ffff_ffff_ffffn);
  assert.equal(hashToU64(7), 7n);
  assert.equal(hashToU64("x"), undefined);
});

test("events that are malformed, carry extra keys, or belong to a non-indexable group are skipped", () => {
  const batch = decodeBatch(
    encoder.encode([
      0,
      [
        ["BlockStored", "not a list", null, [1], 1],
        stored([[["mm-hash"], null]]), // extra_keys
        stored([null, 0, "sliding_window", 128]), // a sliding-window group
        stored([null, 0, "full_attention", null]), // indexable group
        ["Unknown"],
      ],
    ]),
  );
  assert.deepEqual([batch.events.length, batch.skipped], [1, 4]);
  assert.throws(() => decodeBatch(encoder.encode({ not: "a batch" })));
});

test("topics split into pod and model", () => {
  assert.deepEqual(parseTopic("kv@10.0.0.1:8000@meta/llama"), { pod: "10.0.0.1:8000", model: "meta/llama" });
  assert.deepEqual(parseTopic("custom"), { pod: "custom", model: "" });
});
