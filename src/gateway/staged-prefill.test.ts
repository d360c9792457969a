import assert from "node:assert/strict";
import { test } from "node:test";
import { stageBody } from "./staged-prefill.ts";

test("a stage's body is the JSON of the prompt's ids up to the cut, one token, no stream", () => {
  const tokens = Uint32Array.from([0, 9, 10, 99, 100, 12345, 4294967295, 7, 8]);
  const body = JSON.parse(stageBody({ model: 'm "x"', tokens, cacheSalt: 's\\1' }, 7).toString());
  assert.deepEqual(body, {
    model: 'm "x"',
    cache_salt: "s\\1",
    max_tokens: 1,
    stream: false,
    prompt: [0, 9, 10, 99, 100, 12345, 4294967295],
  });
  const plain = JSON.parse(stageBody({ model: "m", tokens, cacheSalt: undefined }, 1).toString());
  assert.deepEqual(plain, { model: "m", max_tokens: 1, stream: false, prompt: [0] });
});
