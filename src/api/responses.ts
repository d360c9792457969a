/**
 * OpenAI Responses API wire types (the subset the official SDKs send and read) and the one mapping
 * from Responses input items to chat messages, shared by the simulator's stateless `/v1/responses`
 * and the router (which rehydrates stored chains and may translate to chat completions).
 */
import { badRequest, LlmdError } from "./errors.ts";
import type { ChatMessageLike } from "./prompt.ts";

/** A content part of a message item. */
export type ContentPart =
  | { type: "input_text"; text: string }
  | { type: "output_text"; text: string; annotations?: unknown[] };

/** A message item (`type: "message"` may be omitted on input, as the SDKs do). */
export interface MessageItem {
  type: "message";
  id?: string;
  role: "user" | "assistant" | "system" | "developer";
  content: string | ContentPart[];
  status?: "completed" | "in_progress" | "incomplete";
}

/** A tool call the model made. */
export interface FunctionCallItem {
  type: "function_call";
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
  status?: "completed";
}

/** The client's answer to a tool call. */
export interface FunctionCallOutputItem {
  type: "function_call_output";
  id?: string;
  call_id: string;
  output: string;
}

/** Any input or output item llmd understands. */
export type ResponseItem = MessageItem | FunctionCallItem | FunctionCallOutputItem;

/** Token usage of a response; `input_tokens_details.cached_tokens` is the prefix-cache hit. */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** A response object as `POST /v1/responses` and `GET /v1/responses/{id}` return it. */
export interface ResponseObject {
  id: string;
  object: "response";
  created_at: number;
  status: "completed" | "incomplete" | "failed" | "in_progress";
  model: string;
  output: ResponseItem[];
  instructions: string | null;
  previous_response_id: string | null;
  max_output_tokens: number | null;
  temperature: number | null;
  tools: unknown[];
  metadata: Record<string, string>;
  store: boolean;
  usage: ResponseUsage | null;
  incomplete_details: { reason: string } | null;
  error: null;
  /** The official SDKs type these as always present; the simulator sends them, echoed or defaulted. */
  top_p?: number | null;
  tool_choice?: unknown;
  parallel_tool_calls?: boolean;
  /** Output format; plain text (`{format: {type: "text"}}`) is the only one served. */
  text?: { format: { type: "text" } };
  truncation?: "disabled" | "auto";
}

/** The request fields a response object repeats, as validated from a `POST /v1/responses` body. */
export interface ResponseRequestEcho {
  instructions: string | null;
  max_output_tokens: number | null;
  temperature: number | null;
  top_p: number | null;
  /** Accepted and repeated, never called: the simulator only answers with text. */
  tools: unknown[];
  tool_choice: unknown;
  parallel_tool_calls: boolean;
  metadata: Record<string, string>;
}

const ROLES = new Set(["user", "assistant", "system", "developer"]);

function messageContent(content: unknown, at: string): string | ContentPart[] | LlmdError {
  if (typeof content === "string") return content;
  // `param` is `input` for every item problem (the message names the item), as for the item itself.
  if (!Array.isArray(content))
    return badRequest(`${at}.content must be a string or an array of parts`, "input");
  for (const [i, part] of content.entries()) {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (!p || (p.type !== "input_text" && p.type !== "output_text") || typeof p.text !== "string") {
      return badRequest(`${at}.content[${i}] must be an input_text or output_text part with a text`, "input");
    }
  }
  return content as ContentPart[];
}

/** One input item, validated; `at` names it in errors (e.g. `input[3]`). */
function inputItem(value: unknown, at: string): ResponseItem | LlmdError {
  const v = value as Record<string, unknown> | null;
  if (!v || typeof v !== "object" || Array.isArray(v)) return badRequest(`${at} must be an object`, "input");
  const type = v.type ?? "message";
  if (type === "message") {
    if (typeof v.role !== "string" || !ROLES.has(v.role))
      return badRequest(`${at}.role must be one of user, assistant, system, developer`, "input");
    const content = messageContent(v.content, at);
    if (typeof content !== "string" && !Array.isArray(content)) return content;
    return { type: "message", role: v.role as MessageItem["role"], content };
  }
  if (type === "function_call") {
    if (typeof v.call_id !== "string" || typeof v.name !== "string" || typeof v.arguments !== "string")
      return badRequest(`${at} needs string call_id, name and arguments`, "input");
    return { type, call_id: v.call_id, name: v.name, arguments: v.arguments };
  }
  if (type === "function_call_output") {
    if (typeof v.call_id !== "string" || typeof v.output !== "string")
      return badRequest(`${at} needs string call_id and output`, "input");
    return { type, call_id: v.call_id, output: v.output };
  }
  return badRequest(`${at}.type ${JSON.stringify(type)} is not supported`, "input");
}

/** `input` of a request (a string or a list of items) as items, or the 400 that answers it. */
export function parseInput(input: unknown): ResponseItem[] | LlmdError {
  if (typeof input === "string") return [{ type: "message", role: "user", content: input }];
  if (!Array.isArray(input)) return badRequest("'input' must be a string or an array of items", "input");
  const items: ResponseItem[] = [];
  for (const [i, value] of input.entries()) {
    const item = inputItem(value, `input[${i}]`);
    if (item instanceof LlmdError) return item;
    items.push(item);
  }
  return items;
}

function partsText(content: string | ContentPart[]): string {
  return typeof content === "string" ? content : content.map((p) => p.text).join("");
}

/**
 * Chat messages for `instructions` followed by `items`, in order: messages keep their role
 * (`developer` as `system`), a tool call becomes an assistant message naming it, a tool output a
 * `tool` message. This is the prompt both the simulator and the router render.
 */
export function itemsToMessages(
  instructions: string | null,
  items: readonly ResponseItem[],
): ChatMessageLike[] {
  const messages: ChatMessageLike[] = instructions ? [{ role: "system", content: instructions }] : [];
  for (const item of items) {
    if (item.type === "message") {
      messages.push({
        role: item.role === "developer" ? "system" : item.role,
        content: partsText(item.content),
      });
    } else if (item.type === "function_call") {
      messages.push({ role: "assistant", content: `${item.name}(${item.arguments})` });
    } else messages.push({ role: "tool", content: item.output });
  }
  return messages;
}

/** The assistant's text output as one output message item. */
export function outputMessage(id: string, text: string): MessageItem {
  return {
    type: "message",
    id,
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  };
}

/** Prefix of response ids. */
export const RESPONSE_ID_PREFIX = "resp_";

/** The id of response `responseId`'s output message. */
export function outputItemId(responseId: string): string {
  return `msg_${responseId.slice(RESPONSE_ID_PREFIX.length)}`;
}

/**
 * The typed server-sent events of one streamed response, numbered in order, for the response's one
 * output message: what both the simulator and the router stream, each in its own order of calls.
 */
export class ResponseEventWriter {
  private sequence = 0;
  private readonly ids: { item_id: string; output_index: 0; content_index: 0 };

  constructor(private readonly itemId: string) {
    this.ids = { item_id: itemId, output_index: 0, content_index: 0 };
  }

  /** One event: `event: <type>` and its data with `type` and `sequence_number`. */
  event(type: string, fields: object): string {
    const data = JSON.stringify({ type, sequence_number: this.sequence++, ...fields });
    return `event: ${type}\ndata: ${data}\n\n`;
  }

  /** `response.created` and `response.in_progress` for the response as it starts. */
  started(response: ResponseObject): string {
    return this.event("response.created", { response }) + this.event("response.in_progress", { response });
  }

  /** The output message and its text part open. */
  itemOpened(): string {
    const item: MessageItem = { ...outputMessage(this.itemId, ""), status: "in_progress", content: [] };
    return (
      this.event("response.output_item.added", { output_index: 0, item }) +
      this.event("response.content_part.added", { ...this.ids, part: textPart("") })
    );
  }

  delta(text: string): string {
    return this.event("response.output_text.delta", { ...this.ids, delta: text, logprobs: [] });
  }

  /** The text, its part and the message close. */
  itemDone(text: string): string {
    return (
      this.event("response.output_text.done", { ...this.ids, text, logprobs: [] }) +
      this.event("response.content_part.done", { ...this.ids, part: textPart(text) }) +
      this.event("response.output_item.done", { output_index: 0, item: outputMessage(this.itemId, text) })
    );
  }
}

function textPart(text: string) {
  return { type: "output_text", text, annotations: [], logprobs: [] };
}
