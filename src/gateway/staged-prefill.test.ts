import assert from "node:assert/strict";
import { test } from "node:test";
import { bodyLength, StageBodies } from "./staged-prefill.ts";

/** A body's pieces parsed, after checking they add up to its length. */
const json = (pieces: readonly Buffer[]) => {
  const bytes = Buffer.concat(pieces);
  assert.equal(bytes.length, bodyLength(pieces));
  return JSON.parse(bytes.toString());
};

test("a stage's body is the JSON of the prompt's ids up to the cut, one token, no stream", async () => {
  const tokens = Uint32Array.from([0, 9, 10, 99, 100, 12345, 4294967295, 7, 8]);
  const bodies = new StageBodies({ model: 'm "x"', tokens, cacheSalt: "s\\1" }, 7);
  const body = json(await bodies.upTo(7));
  assert.deepEqual(body, {
    model: 'm "x"',
    cache_salt: "s\\1",
    max_tokens: 1,
    stream: false,
    prompt: [0, 9, 10, 99, 100, 12345, 4294967295],
  });
  const plain = new StageBodies({ model: "m", tokens, cacheSalt: undefined }, 9);
  assert.deepEqual(json(await plain.upTo(1)).prompt, [0]);
  assert.deepEqual(json(await plain.upTo(9)).prompt, Array.from(tokens), "a later stage extends it");
});

test("the ids of a long prompt are written in slices, each stage extending the last", async () => {
  const tokens = Uint32Array.from({ length: 100_000 }, (_, i) => (i * 7919 + i * i) % 2 ** 32);
  const bodies = new StageBodies({ model: "m", tokens, cacheSalt: undefined }, 90_000);
  for (const cut of [30_000, 60_000, 90_000])
    assert.deepEqual(json(await bodies.upTo(cut)).prompt, Array.from(tokens.subarray(0, cut)));
});
