import assert from "node:assert/strict";
import { test } from "node:test";
import { renderChat } from "../../../api/prompt.ts";
import { encodeChat } from "../../../tokenizer/chat.ts";
import { isAppendOnly } from "../../../tokenizer/conversation-ids.ts";
import { loadTokenizer } from "../../../tokenizer/registry.ts";
import { defaultTokenizer } from "../../../tokenizer/tokenizer.ts";
import type { HostedPlugin } from "../../framework/hosted.ts";
import { makeContext } from "../../framework/testing.ts";
import type { DataProducer } from "../../framework/types.ts";
import { instantiate } from "../testing.ts";
import { definition, tokenizerOf } from "./index.ts";

const llama = loadTokenizer("llama3.1");
const CHAT = "/v1/chat/completions";
type Producer = DataProducer & HostedPlugin;

test("estimate backend: 4 characters per token into request.tokens; existing tokens kept", async () => {
  const producer = instantiate<DataProducer>(definition);
  const ctx = makeContext({ promptText: "x".repeat(4001) });
  await producer.produce(ctx, []);
  assert.equal(ctx.request.tokens?.length, 1001);
  const preset = new Uint32Array([7, 8]);
  const given = makeContext({ promptText: "ignored text", tokens: preset });
  await producer.produce(given, []);
  assert.equal(given.request.tokens, preset);
  const messages = [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Which replica? ".repeat(99) },
  ];
  const chat = makeContext({ path: CHAT, body: { messages }, promptText: renderChat(messages) });
  await producer.produce(chat, []);
  assert.deepEqual(
    chat.request.tokens,
    defaultTokenizer.encode(renderChat(messages)),
    "a chat's pieces, read in place",
  );
  assert.deepEqual(definition.aliases, ["tokenizer"]);
  assert.throws(() => definition.parameters.parse({ backend: "x" }));
});

test("estimate backend, started: a chat's ids kept per conversation (the same ids), a long prompt's decision yields once", async () => {
  const producer = instantiate<Producer>(definition);
  await producer.start();
  try {
    const turn1 = [
      { role: "system", content: "You are terse." },
      { role: "user", content: "Which replica? ".repeat(99) },
    ];
    const turn2 = [...turn1, { role: "assistant", content: "The third." }, { role: "user", content: "Why?" }];
    const tokens: Uint32Array[] = [];
    for (const messages of [turn1, turn2]) {
      const ctx = makeContext({ path: CHAT, body: { messages }, promptText: renderChat(messages) });
      assert.equal(producer.produce(ctx, []), undefined, "a short prompt's ids are set at once");
      assert.deepEqual(ctx.request.tokens, defaultTokenizer.encode(renderChat(messages)));
      tokens.push(ctx.request.tokens!);
    }
    assert.ok(isAppendOnly(tokens[1]!), "a view of the conversation's array");
    assert.ok(
      producer.metrics().every((m) => m.value() > 0),
      "the cache's gauges",
    );
    const long = [{ role: "user", content: "x".repeat(4 * 40_000) }];
    const ctx = makeContext({ path: CHAT, body: { messages: long }, promptText: renderChat(long) });
    const pending = producer.produce(ctx, []);
    assert.ok(pending instanceof Promise, "a 40K-token prompt yields before the next producer");
    await pending;
    assert.deepEqual(ctx.request.tokens, defaultTokenizer.encode(renderChat(long)));
    const other = makeContext({ path: CHAT, body: { messages: turn1 }, promptText: "rendered otherwise" });
    await producer.produce(other, []);
    assert.deepEqual(
      other.request.tokens,
      defaultTokenizer.encode("rendered otherwise"),
      "the prompt text wins",
    );
  } finally {
    await producer.close();
  }
});

test("the tokenizer: named, or the vllm backend's model's when bundled, else the estimate", () => {
  const parse = (p: unknown) => tokenizerOf(definition.parameters.parse(p));
  assert.equal(parse({}), "char4");
  assert.equal(parse({ tokenizer: "llama3.1" }), "llama3.1");
  assert.equal(parse({ modelName: "meta-llama/Llama-3.1-8B-Instruct", vllm: {} }), "llama3.1");
  assert.equal(parse({ modelName: "meta-llama/Meta-Llama-3-70B-Instruct", vllm: {} }), "llama3.1");
  assert.equal(parse({ modelName: "huggyllama/llama-30b", vllm: {} }), "char4");
  assert.equal(parse({ modelName: "Qwen/Qwen3-32B", vllm: {} }), "char4");
  assert.equal(parse({ modelName: "meta-llama/Llama-3.1-8B-Instruct" }), "char4");
  assert.throws(() => definition.parameters.parse({ tokenizer: "gpt2" }));
});

test("llama3.1: a chat gets the template's ids, a completion BOS + text; a new turn tokenizes only its new messages", async () => {
  const producer = instantiate<Producer>(definition, { tokenizer: "llama3.1" });
  const turn1 = [
    { role: "system", content: "You are terse." },
    { role: "user", content: "Name a prime." },
  ];
  const first = makeContext({ path: CHAT, body: { messages: turn1 } });
  await producer.produce(first, []);
  assert.deepEqual(first.request.tokens, encodeChat(llama, turn1));
  const [size] = producer.metrics().filter((m) => m.name === "llmd_token_cache_segments");
  assert.equal(size!.value(), 2);
  const turn2 = [...turn1, { role: "assistant", content: "7" }, { role: "user", content: "Another?" }];
  const second = makeContext({ path: CHAT, body: { messages: turn2 } });
  await producer.produce(second, []);
  assert.deepEqual(second.request.tokens, encodeChat(llama, turn2));
  assert.equal(size!.value(), 4, "only the two new messages were added");
  const completion = makeContext({ promptText: "Hello" });
  await producer.produce(completion, []);
  assert.deepEqual(Array.from(completion.request.tokens!), [128000, 9906]);
});

test("started, new text is tokenized on the worker thread with the same ids", async () => {
  const producer = instantiate<Producer>(definition, { tokenizer: "llama3.1" });
  await producer.start();
  try {
    const messages = [
      { role: "user", content: "The cache keeps the longest shared prefix warm. ".repeat(200) },
    ];
    const ctx = makeContext({ path: CHAT, body: { messages } });
    const pending = producer.produce(ctx, []);
    assert.ok(pending instanceof Promise, "handed to the worker");
    assert.equal(ctx.request.tokens, undefined, "not on the event loop");
    await pending;
    assert.deepEqual(ctx.request.tokens, encodeChat(llama, messages));
    const again = makeContext({ path: CHAT, body: { messages } });
    assert.equal(producer.produce(again, []), undefined, "all cached: synchronous");
    assert.deepEqual(again.request.tokens, ctx.request.tokens);
    const completion = makeContext({ promptText: "Hello" });
    await producer.produce(completion, []);
    assert.deepEqual(Array.from(completion.request.tokens!), [128000, 9906]);
  } finally {
    await producer.close();
  }
});

test("started, turns on a long held conversation get the library's ids; a turn continuing one writes after it", async () => {
  const producer = instantiate<Producer>(definition, { tokenizer: "llama3.1" });
  await producer.start();
  try {
    const prose = "Each replica keeps the blocks it computed; the router sends a turn where they are. ";
    const held = Array.from({ length: 12 }, (_, i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      content: `${i} ${prose.repeat(20)}`,
    }));
    const tokensOf = async (messages: typeof held) => {
      const ctx = makeContext({ path: CHAT, body: { messages } });
      await producer.produce(ctx, []);
      assert.deepEqual(ctx.request.tokens, encodeChat(llama, messages));
      return ctx.request.tokens!;
    };
    await tokensOf(held);
    const ask = [...held, { role: "user", content: "Which replica holds it?" }];
    const plain = await tokensOf(ask);
    const next = await tokensOf([
      ...ask,
      { role: "assistant", content: "Replica 3." },
      { role: "user", content: "Why?" },
    ]);
    assert.equal(next.buffer, plain.buffer, "the next turn's ids were written after the previous turn's");
    // A fork (dense: ꙮ is one code unit and three tokens): the worker builds its array.
    const dense = await tokensOf([...held, { role: "user", content: "ꙮ".repeat(200) }]);
    assert.notEqual(dense.buffer, plain.buffer, "a fork: its own array");
    assert.deepEqual(plain, encodeChat(llama, ask), "an earlier prompt's ids never change");
  } finally {
    await producer.close();
  }
});
