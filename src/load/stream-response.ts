/**
 * One streaming Responses API request (`POST /v1/responses`), timed client-side like a completions
 * request (stream-request.ts): first token at the first non-empty `response.output_text.delta`,
 * usage and the response id from `response.completed` (or `response.incomplete`), an `error` event
 * or a non-200 answer named as the fleet simulator names outcomes.
 */
import type { Dispatcher } from "undici";
import { type StreamOutcome, emptyOutcome, streamErrorOutcome, streamPost } from "./stream-request.ts";

/** A Responses stream's outcome: the completions one plus the id of the stored response. */
export interface ResponseStreamOutcome extends StreamOutcome {
  /** The response's id (to chain the next turn on), when it completed. */
  responseId?: string;
}

interface ResponseEventJson {
  type?: string;
  delta?: string;
  code?: string | number;
  error?: { code?: string | number };
  response?: {
    id?: string;
    usage?: {
      input_tokens?: number;
      output_tokens?: number;
      input_tokens_details?: { cached_tokens?: number } | null;
    } | null;
  };
}

/** Sends `POST {baseUrl}/v1/responses` with `json` (a streaming Responses request, serialised). */
export function streamResponse(
  baseUrl: string,
  json: string,
  headers: Record<string, string>,
  dispatcher?: Dispatcher,
): Promise<ResponseStreamOutcome> {
  const url = `${baseUrl.replace(/\/$/, "")}/v1/responses`;
  return streamPost<ResponseStreamOutcome>(url, json, headers, onEvent, dispatcher, emptyOutcome());
}

/** The event type of a payload the router serialised with `type` first, without parsing it. */
const TYPE_FIRST = /^\{"type":"([^"]+)"/;

function onEvent(data: string, outcome: ResponseStreamOutcome): void {
  const type = TYPE_FIRST.exec(data)?.[1];
  // Only the first delta, the end and errors matter: skip parsing every other event.
  if (type === "response.output_text.delta" && !Number.isNaN(outcome.firstTokenAt)) return;
  if (type !== undefined && !INTERESTING.has(type)) return;
  const json = JSON.parse(data) as ResponseEventJson;
  switch (json.type) {
    case "response.output_text.delta":
      if (Number.isNaN(outcome.firstTokenAt) && (json.delta ?? "") !== "")
        outcome.firstTokenAt = performance.now();
      return;
    case "response.completed":
    case "response.incomplete": {
      const r = json.response;
      if (r?.id) outcome.responseId = r.id;
      outcome.promptTokens = r?.usage?.input_tokens ?? 0;
      outcome.completionTokens = r?.usage?.output_tokens ?? 0;
      outcome.cachedTokens = r?.usage?.input_tokens_details?.cached_tokens ?? 0;
      return;
    }
    case "error":
    case "response.failed":
      // The router ends a started stream with an `error` event (eviction, upstream or store failure).
      outcome.outcome = streamErrorOutcome(json.code ?? json.error?.code);
      return;
    default:
      // A plain `data: {"error": …}` (no type), as the completions path sends.
      if (json.error) outcome.outcome = streamErrorOutcome(json.error.code);
  }
}

const INTERESTING = new Set([
  "response.output_text.delta",
  "response.completed",
  "response.incomplete",
  "response.failed",
  "error",
]);
