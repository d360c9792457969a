/**
 * Tokenizers by name: `char4`, the fast stand-in (4 characters per token), and the bundled real
 * ones. Each is built once per process (a real one takes about a second and a half to load).
 */
import type { ChatTemplate, ChatTokenizer } from "./chat.ts";
import { LLAMA3_TEMPLATE, loadLlama31 } from "./llama3.ts";
import { CharChunkTokenizer } from "./tokenizer.ts";

/** Names `--tokenizer` and token-producer's `tokenizer` accept. */
export const TOKENIZER_NAMES = ["char4", "llama3.1"] as const;

/** One of {@link TOKENIZER_NAMES}. */
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];

/** A real tokenizer's name: one with a model's chat template. */
export type ModelTokenizerName = Exclude<TokenizerName, "char4">;

const LOADERS: Record<TokenizerName, () => ChatTokenizer> = {
  char4: () => new CharChunkTokenizer(),
  "llama3.1": loadLlama31,
};

/**
 * Each real tokenizer's chat template, usable without loading the tokenizer (a router that
 * tokenizes on a worker thread renders on the event loop). `char4` has none: its chat prompt is
 * `renderChat`, one segment.
 */
export const CHAT_TEMPLATES: Record<ModelTokenizerName, ChatTemplate> = {
  "llama3.1": LLAMA3_TEMPLATE,
};

const loaded = new Map<TokenizerName, ChatTokenizer>();

/** The tokenizer called `name`, loaded on first use. */
export function loadTokenizer(name: TokenizerName): ChatTokenizer {
  let tokenizer = loaded.get(name);
  if (!tokenizer) {
    tokenizer = LOADERS[name]();
    loaded.set(name, tokenizer);
  }
  return tokenizer;
}

/** `name` as a tokenizer name, or null when it names none. */
export function parseTokenizerName(name: string): TokenizerName | null {
  return TOKENIZER_NAMES.find((n) => n === name) ?? null;
}

/** The bundled tokenizer of a served model name (Llama 3.x → `llama3.1`), or null when none is bundled. */
export function tokenizerForModel(modelName: string): TokenizerName | null {
  return /llama-?3(?:\.\d+)?(?!\d)/i.test(modelName) ? "llama3.1" : null;
}
