/**
 * OpenAI wire types as served by vLLM's OpenAI-compatible server: the subset llmd reads and writes.
 * Shared by the simulator (which produces them) and the router (which parses and forwards them).
 */
import type { ChatMessageLike } from "./prompt.ts";

/**
 * llmd's response header of a request whose long cold prompt the router prefilled in stages
 * (`staged-prefill`): the prompt tokens the stages prefilled, which the model server's
 * `cached_tokens` counts as cached (by the plan's count: the engine's tokens, or the router's
 * estimate for a prompt of text).
 */
export const STAGED_TOKENS_HEADER = "x-llmd-staged-tokens";

/** Token accounting of one response; `prompt_tokens_details.cached_tokens` as vLLM reports it. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number } | null;
}

/** vLLM's finish reasons: `stop` (EOS or stop string), `length` (max_tokens), `abort`. */
export type FinishReason = "stop" | "length" | "abort";

/** Non-streaming `POST /v1/completions` response. */
export interface CompletionResponse {
  id: string;
  object: "text_completion";
  created: number;
  model: string;
  choices: { index: number; text: string; logprobs: null; finish_reason: FinishReason }[];
  usage: Usage;
}

/** One SSE chunk of a streaming completion; the usage-only chunk has empty `choices`. */
export interface CompletionChunk {
  id: string;
  object: "text_completion";
  created: number;
  model: string;
  choices: { index: number; text: string; logprobs: null; finish_reason: FinishReason | null }[];
  usage?: Usage | null;
}

/** Non-streaming `POST /v1/chat/completions` response. */
export interface ChatCompletionResponse {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: "assistant"; content: string };
    logprobs: null;
    finish_reason: FinishReason;
  }[];
  usage: Usage;
}

/** One SSE chunk of a streaming chat completion; the usage-only chunk has empty `choices`. */
export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: {
    index: number;
    delta: { role?: "assistant"; content?: string };
    logprobs: null;
    finish_reason: FinishReason | null;
  }[];
  usage?: Usage | null;
}

/** `GET /v1/models` entry, with vLLM's `root`, `parent` and `max_model_len` fields. */
export interface ModelCard {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  root: string;
  parent: string | null;
  max_model_len: number;
}

/** `POST /tokenize` response in vLLM's shape. */
export interface TokenizeResponse {
  count: number;
  max_model_len: number;
  tokens: number[];
}

/**
 * The prompt of a generation request: rendered text (with the chat's messages, which a model's
 * own chat template renders), or token ids given by the client.
 */
export type PromptInput =
  | {
      text: string;
      messages?: readonly ChatMessageLike[];
      /** A chat rendered without its generation prompt (vLLM's `add_generation_prompt: false`). */
      addGenerationPrompt?: false;
    }
  | { tokenIds: Uint32Array };

/**
 * A validated completions, chat or responses request, normalised so the endpoints share one code
 * path (a responses request is a chat request over `itemsToMessages(instructions, input)`).
 * Lengths are in tokens; `maxTokens` is undefined when the client sent no limit.
 */
export interface GenerationRequest {
  kind: "completion" | "chat" | "responses";
  model: string;
  prompt: PromptInput;
  /** What an echoing server returns: the completions prompt or the last user message. */
  echoText: string;
  stream: boolean;
  /** `stream_options.include_usage`: a final chunk carrying usage. */
  includeUsage: boolean;
  /** `max_tokens`, chat's `max_completion_tokens` or responses' `max_output_tokens`; >= 1 when set. */
  maxTokens: number | undefined;
  ignoreEos: boolean;
  /** Stop strings (non-empty strings only). */
  stop: string[];
  /** vLLM's `cache_salt`: isolates prefix caching between tenants. */
  cacheSalt: string | undefined;
  /** vLLM's `priority` (integer; LOWER is served first under `--scheduling-policy priority`). */
  priority?: number;
}
