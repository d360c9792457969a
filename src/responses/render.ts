/**
 * Renders a generation as OpenAI Responses output: the response object, and the typed SSE events
 * of a streamed response in OpenAI's order (created, in_progress, output_item.added,
 * content_part.added, output_text.delta…, output_text.done, content_part.done, output_item.done,
 * completed), each with a `sequence_number`.
 */
import {
  outputMessage,
  type ResponseItem,
  type ResponseObject,
  type ResponseUsage,
} from "../api/responses.ts";

/** The request fields a response echoes. */
export interface ResponseEcho {
  id: string;
  model: string;
  createdAt: number;
  instructions: string | null;
  previousResponseId: string | null;
  maxOutputTokens: number | null;
  temperature: number | null;
  tools: unknown[];
  metadata: Record<string, string>;
  store: boolean;
}

/** What the model server produced. */
export interface Generation {
  text: string;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** True when cut by `max_output_tokens`. */
  truncated: boolean;
}

/** Usage in the Responses shape. */
export function responseUsage(g: Generation): ResponseUsage {
  return {
    input_tokens: g.promptTokens,
    input_tokens_details: { cached_tokens: g.cachedTokens },
    output_tokens: g.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: g.promptTokens + g.completionTokens,
  };
}

/** The response object; `output` and `usage` absent while in progress. */
export function responseObject(echo: ResponseEcho, output: ResponseItem[], g?: Generation): ResponseObject {
  return {
    id: echo.id,
    object: "response",
    created_at: echo.createdAt,
    status: g === undefined ? "in_progress" : g.truncated ? "incomplete" : "completed",
    model: echo.model,
    output,
    instructions: echo.instructions,
    previous_response_id: echo.previousResponseId,
    max_output_tokens: echo.maxOutputTokens,
    temperature: echo.temperature,
    tools: echo.tools,
    metadata: echo.metadata,
    store: echo.store,
    usage: g === undefined ? null : responseUsage(g),
    incomplete_details: g?.truncated ? { reason: "max_output_tokens" } : null,
    error: null,
  };
}

/** The output message id of response `id`. */
export function outputItemId(responseId: string): string {
  return `msg_${responseId.slice("resp_".length)}`;
}

/** Typed SSE events of one streamed response. */
export class ResponseEvents {
  private sequence = 0;
  private readonly itemId: string;

  constructor(private readonly echo: ResponseEcho) {
    this.itemId = outputItemId(echo.id);
  }

  /** Everything before the first delta. */
  opening(): string {
    const inProgress = responseObject(this.echo, []);
    const item = { ...outputMessage(this.itemId, ""), status: "in_progress", content: [] };
    return (
      this.event("response.created", { response: inProgress }) +
      this.event("response.in_progress", { response: inProgress }) +
      this.event("response.output_item.added", { output_index: 0, item }) +
      this.event("response.content_part.added", {
        item_id: this.itemId,
        output_index: 0,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      })
    );
  }

  /** One text delta. */
  delta(text: string): string {
    return this.event("response.output_text.delta", {
      item_id: this.itemId,
      output_index: 0,
      content_index: 0,
      delta: text,
      logprobs: [],
    });
  }

  /** Everything after the last delta, ending with `response.completed` (or `incomplete`). */
  closing(g: Generation): string {
    const item = outputMessage(this.itemId, g.text);
    const part = { type: "output_text", text: g.text, annotations: [] };
    const done = responseObject(this.echo, [item], g);
    const ids = { item_id: this.itemId, output_index: 0, content_index: 0 };
    return (
      this.event("response.output_text.done", { ...ids, text: g.text, logprobs: [] }) +
      this.event("response.content_part.done", { ...ids, part }) +
      this.event("response.output_item.done", { output_index: 0, item }) +
      this.event(g.truncated ? "response.incomplete" : "response.completed", { response: done })
    );
  }

  /** An `error` event (the stream then ends). */
  error(code: string, message: string): string {
    return this.event("error", { code, message, param: null });
  }

  private event(type: string, fields: Record<string, unknown>): string {
    const data = JSON.stringify({ type, sequence_number: this.sequence++, ...fields });
    return `event: ${type}\ndata: ${data}\n\n`;
  }
}
