import assert from "node:assert/strict";
import { test } from "node:test";
import { bodyLength, ChatStageBodies, IdStageBodies, TextStageBodies } from "./staged-prefill.ts";

/** A body's pieces parsed, after checking they add up to its length. */
const json = (pieces: readonly Buffer[]) => {
  const bytes = Buffer.concat(pieces);
  assert.equal(bytes.length, bodyLength(pieces));
  return JSON.parse(bytes.toString());
};

test("an id stage's body is the JSON of the prompt's ids up to the cut, one token, no stream", async () => {
  const tokens = Uint32Array.from([0, 9, 10, 99, 100, 12345, 4294967295, 7, 8]);
  const bodies = new IdStageBodies({ model: 'm "x"', cacheSalt: "s\\1" }, tokens, 7);
  assert.deepEqual(json(await bodies.upTo(7)), {
    model: 'm "x"',
    cache_salt: "s\\1",
    max_tokens: 1,
    stream: false,
    prompt: [0, 9, 10, 99, 100, 12345, 4294967295],
  });
  const plain = new IdStageBodies({ model: "m", cacheSalt: undefined }, tokens, 9);
  assert.deepEqual(json(await plain.upTo(1)), { model: "m", max_tokens: 1, stream: false, prompt: [0] });
  assert.deepEqual(json(await plain.upTo(9)).prompt, Array.from(tokens), "a later stage extends it");
});

test("the ids of a long prompt are written in slices, each stage extending the last", async () => {
  const tokens = Uint32Array.from({ length: 100_000 }, (_, i) => (i * 7919 + i * i) % 2 ** 32);
  const bodies = new IdStageBodies({ model: "m", cacheSalt: undefined }, tokens, 90_000);
  for (const cut of [30_000, 60_000, 90_000])
    assert.deepEqual(json(await bodies.upTo(cut)).prompt, Array.from(tokens.subarray(0, cut)));
});

/** A text of words with quotes, newlines and non-ASCII in it. */
const words = Array.from({ length: 40_000 }, (_, i) =>
  i % 7 === 0 ? `"w${i}"\n` : i % 11 === 0 ? `é${i}` : `w${i}`,
);
const text = words.join(" ");

test("a text stage is the prompt up to a space near the cut's share of it, escaped", async () => {
  const bodies = new TextStageBodies({ model: "m", cacheSalt: undefined }, text, 100_000);
  let last = 0;
  for (const cut of [25_000, 50_000, 75_000]) {
    const body = json(await bodies.upTo(cut));
    const prompt = body.prompt as string;
    assert.ok(text.startsWith(prompt), "a prefix of the prompt");
    assert.equal(text[prompt.length], " ", "ends before a space");
    const share = Math.floor((cut / 100_000) * text.length);
    assert.ok(prompt.length <= share && prompt.length > share - 4096, `${prompt.length} near ${share}`);
    assert.ok(prompt.length > last);
    last = prompt.length;
    assert.deepEqual({ ...body, prompt: "" }, { model: "m", max_tokens: 1, stream: false, prompt: "" });
  }
});

test("a prompt carried as plain ASCII bytes is staged as views of them", async () => {
  const ascii = Buffer.from(Array.from({ length: words.length }, (_, i) => `w${i}`).join(" "));
  const bodies = new TextStageBodies({ model: "m", cacheSalt: "salt" }, ascii, 50_000);
  const pieces = await bodies.upTo(25_000);
  assert.ok(
    pieces.some((piece) => piece.buffer === ascii.buffer),
    "no copy of the prompt's bytes",
  );
  const prompt = json(pieces).prompt as string;
  assert.ok(ascii.toString().startsWith(prompt));
  assert.equal(ascii[prompt.length], 32);
  assert.equal(json(pieces).cache_salt, "salt");
});

test("a chat stage's body is its leading messages without the generation prompt, with the fields that shape the rendering", async () => {
  const messages = Array.from({ length: 6 }, (_, i) => ({
    role: i % 2 ? "assistant" : "user",
    content: `turn ${i} "quoted" ${"z".repeat(40_000)}`,
  }));
  const body = {
    model: "alias",
    messages,
    tools: [{ type: "function", function: { name: "f", parameters: {} } }],
    cache_salt: "tenant",
    stream: true,
    max_completion_tokens: 500,
    add_generation_prompt: true,
  };
  const bodies = new ChatStageBodies("served", body, { cuts: [20_000, 40_000], messages: [2, 4] });
  assert.equal(bodies.path, "/v1/chat/completions");
  assert.deepEqual(json(await bodies.upTo(20_000)), {
    model: "served",
    tools: body.tools,
    cache_salt: "tenant",
    max_tokens: 1,
    stream: false,
    add_generation_prompt: false,
    messages: messages.slice(0, 2),
  });
  assert.deepEqual(
    json(await bodies.upTo(40_000)).messages,
    messages.slice(0, 4),
    "a later stage extends it",
  );
});

test("a chat stage escapes long strings in slices (contents, text parts, any field), surrogate pairs and the mark itself included", async () => {
  const long = `${"a".repeat(65_535)}\u{1F600} "q" \\ ${"é\n".repeat(40_000)}`;
  const messages = [
    { role: "system", content: long },
    {
      role: "user",
      name: "dev",
      content: [
        { type: "text", text: "parts" },
        { type: "text", text: long },
      ],
    },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
    },
    { role: "tool", tool_call_id: "c", content: long.slice(3) },
    { role: "user", content: "\u0000llmd-long-string\u0000", note: long },
    { role: "user", content: "last" },
  ];
  const bodies = new ChatStageBodies("m", { messages }, { cuts: [1_000], messages: [5] });
  assert.deepEqual(json(await bodies.upTo(1_000)).messages, messages.slice(0, 5));
  const sliced = await new ChatStageBodies("m", { messages }, { cuts: [1_000], messages: [4] }).upTo(1_000);
  const widest = Math.max(...sliced.map((piece) => piece.length));
  // A slice is 65,536 code units; "é" takes two bytes, "\n" two, and nothing here more.
  assert.ok(widest <= 2 * 65_536, `the widest piece of the first four messages is ${widest} bytes`);
});
