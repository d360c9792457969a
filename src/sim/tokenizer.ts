/**
 * The simulator's tokenizer and how it counts a prompt. `--tokenizer` names it; without the flag a
 * given `--profile` names its model's (h200-llama3-8b: `llama3.1`), and with neither the server
 * keeps the 4-characters-per-token stand-in, as llm-d-inference-sim counts without a tokenizer.
 * A real tokenizer's chats go through a per-message cache (one per process, as the tokenizer), so
 * a conversation's next turn tokenizes only its new messages on the server's event loop.
 */
import type { ChatMessageLike } from "../api/prompt.ts";
import type { PromptInput } from "../api/openai.ts";
import { PROFILE_TOKENIZER, parseProfileName } from "../engine/profile.ts";
import { type ChatTokenizer, encodeChat } from "../tokenizer/chat.ts";
import { IncrementalEncoder } from "../tokenizer/incremental.ts";
import {
  loadTokenizer,
  type ModelTokenizerName,
  parseTokenizerName,
  type TokenizerName,
} from "../tokenizer/registry.ts";
import type { SimConfig } from "./config.ts";

/** Bytes of message segments and their ids a process keeps per real tokenizer. */
const CHAT_CACHE_BYTES = 128 * 1024 * 1024;
const chatCaches = new Map<TokenizerName, IncrementalEncoder>();

/** The tokenizer a server with `config` counts with. */
export function simTokenizer(config: Pick<SimConfig, "tokenizer" | "profile">): ChatTokenizer {
  const profile = config.profile === undefined ? null : parseProfileName(config.profile);
  return loadTokenizer(config.tokenizer ?? (profile ? PROFILE_TOKENIZER[profile] : "char4"));
}

/**
 * A prompt's token ids as vLLM computes them: a chat through the model's template, a completions
 * prompt with the model's BOS, token ids as given.
 */
export function promptTokenIds(tokenizer: ChatTokenizer, prompt: PromptInput): Uint32Array {
  if (!("text" in prompt)) return prompt.tokenIds;
  if (!prompt.messages) return tokenizer.encodePrompt(prompt.text);
  if (prompt.addGenerationPrompt !== false) return chatIds(tokenizer, prompt.messages);
  if (modelTokenizer(tokenizer) === null) return tokenizer.encode(prompt.text);
  // A real template encodes the generation prompt as its own segment (no merge crosses one).
  const ids = chatIds(tokenizer, prompt.messages);
  return ids.subarray(0, ids.length - tokenizer.encode(tokenizer.chatSegments([]).at(-1)!).length);
}

/** The model tokenizer `tokenizer` is, or null for the stand-in. */
function modelTokenizer(tokenizer: ChatTokenizer): ModelTokenizerName | null {
  const name = parseTokenizerName(tokenizer.name);
  return name === null || name === "char4" ? null : name;
}

/** A chat's ids; the stand-in recomputes (cheaper than a lookup), a real tokenizer caches. */
function chatIds(tokenizer: ChatTokenizer, messages: readonly ChatMessageLike[]): Uint32Array {
  const name = modelTokenizer(tokenizer);
  if (name === null) return encodeChat(tokenizer, messages);
  let cache = chatCaches.get(name);
  if (!cache) {
    cache = new IncrementalEncoder(name, CHAT_CACHE_BYTES);
    chatCaches.set(name, cache);
  }
  return cache.encodeChatHere(messages);
}
