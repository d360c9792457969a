/**
 * The simulator's tokenizer and how it counts a prompt. `--tokenizer` names it; without the flag a
 * given `--profile` names its model's (h200-llama3-8b: `llama3.1`), and with neither the server
 * keeps the 4-characters-per-token stand-in, as llm-d-inference-sim counts without a tokenizer.
 */
import type { PromptInput } from "../api/openai.ts";
import { PROFILE_TOKENIZER, parseProfileName } from "../engine/profile.ts";
import { type ChatTokenizer, encodeChat } from "../tokenizer/chat.ts";
import { loadTokenizer } from "../tokenizer/registry.ts";
import type { SimConfig } from "./config.ts";

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
  return prompt.messages ? encodeChat(tokenizer, prompt.messages) : tokenizer.encodePrompt(prompt.text);
}
