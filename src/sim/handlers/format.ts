/**
 * Response bodies of the generation endpoints in vLLM's shapes, behind one interface so the
 * generation run does not care which endpoint it serves: completions and chat stream
 * `data: {chunk}` events closed by `data: [DONE]`.
 */
import type {
  ChatCompletionChunk,
  ChatCompletionResponse,
  CompletionChunk,
  CompletionResponse,
  FinishReason,
  Usage,
} from "../../api/openai.ts";
import { SSE_DONE, sseData } from "../http.ts";

/** Identity of one response, repeated in every chunk. */
export interface ResponseHead {
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
}

/** The SSE text of one streamed response, piece by piece, in order; single use. */
export interface StreamEncoder {
  /** Sent as the stream opens, before any token ("" when the format sends nothing then). */
  open(): string;
  /** A chunk of output `text` (may be ""); `finish` is set on the chunk with the last token. */
  chunk(text: string, finish: FinishReason | null): string;
  /** Ends the stream after the last chunk; `text` is the whole output. */
  close(text: string, finish: FinishReason, usage: Usage): string;
}

/** Builds the bodies of one endpoint. */
export interface ResponseFormat {
  /** Prefix of response ids (`cmpl-`, `chatcmpl-`). */
  readonly idPrefix: string;
  /** The encoder of one streamed response; `includeUsage` is `stream_options.include_usage`. */
  stream(head: ResponseHead, includeUsage: boolean): StreamEncoder;
  /** The non-streaming body. */
  full(head: ResponseHead, text: string, finish: FinishReason, usage: Usage): object;
}

/**
 * The completions/chat stream: one `data:` event per chunk (`first` marks the first, where chat
 * sends the role), the usage-only chunk when asked, then `[DONE]`.
 */
function dataStream(
  includeUsage: boolean,
  chunk: (text: string, finish: FinishReason | null, first: boolean) => object,
  usageChunk: (usage: Usage) => object,
): StreamEncoder {
  let first = true;
  return {
    open: () => "",
    chunk(text, finish) {
      const event = sseData(chunk(text, finish, first));
      first = false;
      return event;
    },
    close: (_text, _finish, usage) => (includeUsage ? sseData(usageChunk(usage)) : "") + SSE_DONE,
  };
}

/** `/v1/completions`. */
export const completionFormat: ResponseFormat = {
  idPrefix: "cmpl-",
  stream(head, includeUsage) {
    return dataStream(
      includeUsage,
      (text, finish): CompletionChunk => ({
        ...head,
        object: "text_completion",
        choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
      }),
      (usage): CompletionChunk => ({ ...head, object: "text_completion", choices: [], usage }),
    );
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
  stream(head, includeUsage) {
    return dataStream(
      includeUsage,
      (text, finish, first): ChatCompletionChunk => {
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
      (usage): ChatCompletionChunk => ({ ...head, object: "chat.completion.chunk", choices: [], usage }),
    );
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
