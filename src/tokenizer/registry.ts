/**
 * Tokenizers by name: `char4`, the fast stand-in (4 characters per token), and the bundled real
 * ones. Each is built once per process (a real one takes about a second and a half to load).
 */
import { renderChat } from "../api/prompt.ts";
import type { ChatTemplate, ChatTokenizer } from "./chat.ts";
import { llama3ChatSegments, loadLlama31 } from "./llama3.ts";
import { CharChunkTokenizer } from "./tokenizer.ts";

/** Names `--tokenizer` and token-producer's `tokenizer` accept. */
export const TOKENIZER_NAMES = ["char4", "llama3.1"] as const;

/** One of {@link TOKENIZER_NAMES}. */
export type TokenizerName = (typeof TOKENIZER_NAMES)[number];

const LOADERS: Record<TokenizerName, () => ChatTokenizer> = {
  char4: () => new CharChunkTokenizer(),
  "llama3.1": loadLlama31,
};

/**
 * Each tokenizer's chat template, usable without loading the tokenizer (a router that tokenizes on
 * a worker thread renders on the event loop). `char4` renders `renderChat`, one segment.
 */
export const CHAT_TEMPLATES: Record<TokenizerName, ChatTemplate> = {
  char4: (messages) => [renderChat(messages)],
  "llama3.1": llama3ChatSegments,
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
