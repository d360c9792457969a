/**
 * Renders a generation as OpenAI Responses output: the response object, and the typed SSE events
 * of a streamed response in OpenAI's order (created, in_progress, output_item.added,
 * content_part.added, output_text.delta…, output_text.done, content_part.done, output_item.done,
 * completed), each with a `sequence_number`.
 */
import {
  outputItemId,
  outputMessage,
  ResponseEventWriter,
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

/** Typed SSE events of one streamed response, in OpenAI's order. */
export class ResponseEvents {
  private readonly writer: ResponseEventWriter;

  constructor(private readonly echo: ResponseEcho) {
    this.writer = new ResponseEventWriter(outputItemId(echo.id));
  }

  /** Everything before the first delta. */
  opening(): string {
    return this.writer.started(responseObject(this.echo, [])) + this.writer.itemOpened();
  }

  /** One text delta. */
  delta(text: string): string {
    return this.writer.delta(text);
  }

  /** Everything after the last delta, ending with `response.completed` (or `incomplete`). */
  closing(g: Generation): string {
    const done = responseObject(this.echo, [outputMessage(outputItemId(this.echo.id), g.text)], g);
    const end = g.truncated ? "response.incomplete" : "response.completed";
    return this.writer.itemDone(g.text) + this.writer.event(end, { response: done });
  }

  /** An `error` event (the stream then ends). */
  error(code: string, message: string): string {
    return this.writer.event("error", { code, message, param: null });
  }
}
