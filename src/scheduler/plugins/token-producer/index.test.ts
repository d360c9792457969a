import assert from "node:assert/strict";
import { test } from "node:test";
import { makeContext } from "../../framework/testing.ts";
import type { DataProducer } from "../../framework/types.ts";
import { instantiate } from "../testing.ts";
import { definition } from "./index.ts";

test("estimate backend: 4 characters per token into request.tokens; existing tokens kept", async () => {
  const producer = instantiate<DataProducer>(definition);
  const ctx = makeContext({ promptText: "x".repeat(4001) });
  await producer.produce(ctx, []);
  assert.equal(ctx.request.tokens?.length, 1001);
  const preset = new Uint32Array([7, 8]);
  const given = makeContext({ promptText: "ignored text", tokens: preset });
  await producer.produce(given, []);
  assert.equal(given.request.tokens, preset);
  assert.deepEqual(definition.aliases, ["tokenizer"]);
  assert.throws(() => definition.parameters.parse({ backend: "x" }));
});
