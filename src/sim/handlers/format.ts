/**
 * Response bodies of the two generation endpoints in vLLM's shapes, behind one interface so the
 * generation handler does not care which endpoint it serves.
 */
import type {
  ChatCompletionChunk,
  ChatCompletionResponse,
  CompletionChunk,
  CompletionResponse,
  FinishReason,
  Usage,
} from "../../api/openai.ts";

/** Identity of one response, repeated in every chunk. */
export interface ResponseHead {
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
}

/** Builds the bodies of one endpoint. */
export interface ResponseFormat {
  /** Prefix of response ids (`cmpl-`, `chatcmpl-`). */
  readonly idPrefix: string;
  /** A streaming chunk; `first` marks the first chunk of the stream (chat sends the role there). */
  chunk(head: ResponseHead, text: string, finish: FinishReason | null, first: boolean): object;
  /** The final usage-only chunk (`stream_options.include_usage`). */
  usageChunk(head: ResponseHead, usage: Usage): object;
  /** The non-streaming body. */
  full(head: ResponseHead, text: string, finish: FinishReason, usage: Usage): object;
}

/** `/v1/completions`. */
export const completionFormat: ResponseFormat = {
  idPrefix: "cmpl-",
  chunk(head, text, finish): CompletionChunk {
    return {
      ...head,
      object: "text_completion",
      choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
    };
  },
  usageChunk(head, usage): CompletionChunk {
    return { ...head, object: "text_completion", choices: [], usage };
  },
  full(head, text, finish, usage): CompletionResponse {
    return {
      ...head,
      object: "text_completion",
      choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
      usage,
    };
  },
};

/** `/v1/chat/completions`. */
export const chatFormat: ResponseFormat = {
  idPrefix: "chatcmpl-",
  chunk(head, text, finish, first): ChatCompletionChunk {
    const delta = first
      ? { role: "assistant" as const, content: text }
      : finish && !text
        ? {}
        : { content: text };
    return {
      ...head,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
  },
  usageChunk(head, usage): ChatCompletionChunk {
    return { ...head, object: "chat.completion.chunk", choices: [], usage };
  },
  full(head, text, finish, usage): ChatCompletionResponse {
    return {
      ...head,
      object: "chat.completion",
      choices: [
        { index: 0, message: { role: "assistant", content: text }, logprobs: null, finish_reason: finish },
      ],
      usage,
    };
  },
};
