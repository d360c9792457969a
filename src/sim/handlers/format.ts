/**
 * Response bodies of the generation endpoints in vLLM's shapes, behind one interface so the
 * generation run does not care which endpoint it serves: completions and chat stream
 * `data: {chunk}` events closed by `data: [DONE]`; the Responses API streams OpenAI's typed events.
 */
import type {
  ChatCompletionChunk,
  ChatCompletionResponse,
  CompletionChunk,
  CompletionResponse,
  FinishReason,
  Usage,
} from "../../api/openai.ts";
import {
  type MessageItem,
  outputItemId,
  outputMessage,
  RESPONSE_ID_PREFIX,
  ResponseEventWriter,
  type ResponseObject,
  type ResponseRequestEcho,
  type ResponseUsage,
} from "../../api/responses.ts";
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
  /** Prefix of response ids (`cmpl-`, `chatcmpl-`, `resp_`). */
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

/** The engine's usage in the Responses API's names; the simulator does not reason. */
function responseUsage(usage: Usage): ResponseUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens,
  };
}

/**
 * `/v1/responses` for one request, whose response object repeats `echo`. Stateless, like vLLM
 * without `VLLM_ENABLE_RESPONSES_API_STORE`: nothing is kept, so every object says `store: false`.
 * The output is one assistant message with one `output_text` part; a response cut by the token
 * limit (finish `length`) is `incomplete` with reason `max_output_tokens`, its message still
 * `completed` (vLLM's statuses).
 */
export function responsesFormat(echo: ResponseRequestEcho): ResponseFormat {
  const message = (head: ResponseHead, text: string): MessageItem =>
    outputMessage(outputItemId(head.id), text);
  const object = (
    head: ResponseHead,
    status: ResponseObject["status"],
    output: MessageItem[],
    usage: Usage | null,
  ): ResponseObject => ({
    id: head.id,
    object: "response",
    created_at: head.created,
    status,
    model: head.model,
    output,
    instructions: echo.instructions,
    previous_response_id: null,
    max_output_tokens: echo.max_output_tokens,
    temperature: echo.temperature,
    top_p: echo.top_p,
    tools: echo.tools,
    tool_choice: echo.tool_choice,
    parallel_tool_calls: echo.parallel_tool_calls,
    metadata: echo.metadata,
    store: false,
    text: { format: { type: "text" } },
    truncation: "disabled",
    usage: usage && responseUsage(usage),
    incomplete_details: status === "incomplete" ? { reason: "max_output_tokens" } : null,
    error: null,
  });
  const full = (head: ResponseHead, text: string, finish: FinishReason, usage: Usage): ResponseObject =>
    object(head, finish === "length" ? "incomplete" : "completed", [message(head, text)], usage);
  return {
    idPrefix: RESPONSE_ID_PREFIX,
    full,
    stream(head) {
      const events = new ResponseEventWriter(outputItemId(head.id));
      // The message and its part open with the first chunk (as vLLM does), or at the end when the
      // output is empty and no chunk carried text.
      let opened = false;
      const openItem = (): string => {
        if (opened) return "";
        opened = true;
        return events.itemOpened();
      };
      return {
        open: () => events.started(object(head, "in_progress", [], null)),
        chunk(text) {
          const opening = openItem();
          return text === "" ? opening : opening + events.delta(text);
        },
        // OpenAI ends an incomplete stream with `response.incomplete`; vLLM always sends
        // `response.completed`, its response carrying the status, and the simulator follows vLLM.
        close(text, finish, usage) {
          return (
            openItem() +
            events.itemDone(text) +
            events.event("response.completed", { response: full(head, text, finish, usage) })
          );
        },
      };
    },
  };
}
