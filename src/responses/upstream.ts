/**
 * The model server's side of a Responses request. A rehydrated turn goes upstream either as a
 * stateless `/v1/responses` request (vLLM and `llmd sim` implement it) or translated to
 * `/v1/chat/completions` (any OpenAI-compatible server), and the answer, JSON or SSE, is read back
 * into one {@link Generation}.
 */
import type { ChatMessageLike } from "../api/prompt.ts";
import type { CachedChain } from "./chain-cache.ts";
import type { Generation } from "./render.ts";

/** Which API the model servers speak for Responses turns. */
export type ResponsesBackend = "chat" | "responses";

/** A turn as the router sends it: the whole history and the request's generation fields. */
export interface UpstreamTurn {
  model: string;
  instructions: string | null;
  /** The whole history, this turn's input last. */
  chain: CachedChain;
  stream: boolean;
  maxOutputTokens: number | null;
  temperature: number | null;
  /** Other fields the client sent (sampling parameters, `tools`, vendor extensions such as `ignore_eos`). */
  passthrough: Readonly<Record<string, unknown>>;
}

/** The upstream request: path, body (for plugins to read) and the body serialised. */
export interface UpstreamRequest {
  path: string;
  body: Record<string, unknown>;
  json: string;
  /** The turn as chat messages, instructions first: the prompt the router renders. */
  messages: readonly ChatMessageLike[];
}

/** Responses-only fields never sent to a chat backend. */
const RESPONSES_ONLY = new Set([
  "tools",
  "tool_choice",
  "text",
  "reasoning",
  "truncation",
  "include",
  "parallel_tool_calls",
]);

/** `fields` serialised with `"key":[list]` appended, where `list` is already JSON (comma-joined). */
function withJsonList(fields: Record<string, unknown>, key: string, list: string): string {
  const head = JSON.stringify(fields);
  return `${head.slice(0, -1)}${head.length > 2 ? "," : ""}${JSON.stringify(key)}:[${list}]}`;
}

/**
 * The upstream request for `turn`. The history's JSON comes from the chain as cached, so only the
 * request's own fields are serialised here, whatever the length of the conversation.
 */
export function upstreamRequest(backend: ResponsesBackend, turn: UpstreamTurn): UpstreamRequest {
  const { chain } = turn;
  const system = turn.instructions ? [{ role: "system", content: turn.instructions }] : [];
  const messages = system.length > 0 ? [...system, ...chain.messages] : chain.messages;
  const common = {
    ...(turn.temperature === null ? {} : { temperature: turn.temperature }),
    stream: turn.stream,
  };
  if (backend === "responses") {
    const fields = {
      ...turn.passthrough,
      model: turn.model,
      ...(turn.instructions ? { instructions: turn.instructions } : {}),
      ...(turn.maxOutputTokens === null ? {} : { max_output_tokens: turn.maxOutputTokens }),
      ...common,
      store: false,
    };
    const body = { ...fields, input: chain.items };
    return { path: "/v1/responses", body, json: withJsonList(fields, "input", chain.itemsJson), messages };
  }
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(turn.passthrough))
    if (!RESPONSES_ONLY.has(key)) extra[key] = value;
  const fields = {
    ...extra,
    model: turn.model,
    ...(turn.maxOutputTokens === null ? {} : { max_tokens: turn.maxOutputTokens }),
    ...common,
    ...(turn.stream ? { stream_options: { include_usage: true } } : {}),
  };
  const list =
    system.length > 0
      ? [JSON.stringify(system[0]), chain.messagesJson].filter(Boolean).join(",")
      : chain.messagesJson;
  return {
    path: "/v1/chat/completions",
    body: { ...fields, messages },
    json: withJsonList(fields, "messages", list),
    messages,
  };
}

interface UsageJson {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number };
}

function applyUsage(g: Generation, usage: UsageJson | null | undefined): void {
  if (!usage) return;
  g.promptTokens = usage.prompt_tokens ?? usage.input_tokens ?? g.promptTokens;
  g.completionTokens = usage.completion_tokens ?? usage.output_tokens ?? g.completionTokens;
  g.cachedTokens =
    usage.prompt_tokens_details?.cached_tokens ?? usage.input_tokens_details?.cached_tokens ?? 0;
}

interface ChatJson {
  choices?: {
    message?: { content?: string | null };
    delta?: { content?: string | null };
    finish_reason?: string | null;
  }[];
  usage?: UsageJson | null;
}

interface ResponsesJson {
  type?: string;
  delta?: string;
  status?: string;
  output?: { type?: string; content?: { type?: string; text?: string }[] }[];
  usage?: UsageJson | null;
  response?: ResponsesJson;
}

function responsesText(r: ResponsesJson): string {
  let text = "";
  for (const item of r.output ?? [])
    for (const part of item.content ?? []) if (part.type === "output_text") text += part.text ?? "";
  return text;
}

/** One SSE event's JSON; a malformed event reads as empty (the stream's end still completes the turn). */
function parseEvent(data: string): ChatJson & ResponsesJson {
  try {
    return JSON.parse(data) as ChatJson & ResponsesJson;
  } catch {
    return {};
  }
}

/** Reads an upstream answer (JSON body or SSE chunks) into a {@link Generation}. */
export class GenerationReader {
  readonly generation: Generation = {
    text: "",
    promptTokens: 0,
    cachedTokens: 0,
    completionTokens: 0,
    truncated: false,
  };
  private pending = "";

  constructor(private readonly backend: ResponsesBackend) {}

  /** A whole non-streaming body. */
  json(body: string): void {
    if (this.backend === "chat") {
      const chat = JSON.parse(body) as ChatJson;
      const choice = chat.choices?.[0];
      this.generation.text = choice?.message?.content ?? "";
      this.generation.truncated = choice?.finish_reason === "length";
      applyUsage(this.generation, chat.usage);
      return;
    }
    this.finished(JSON.parse(body) as ResponsesJson);
  }

  /** An SSE chunk; returns the text deltas it completed, in order. */
  chunk(chunk: string): string[] {
    this.pending += chunk;
    const deltas: string[] = [];
    for (let nl = this.pending.indexOf("\n"); nl >= 0; nl = this.pending.indexOf("\n")) {
      const line = this.pending.slice(0, nl).trim();
      this.pending = this.pending.slice(nl + 1);
      if (!line.startsWith("data:")) continue;
      const data = line.slice(5).trim();
      if (data === "" || data === "[DONE]") continue;
      const delta = this.event(parseEvent(data));
      if (delta) deltas.push(delta);
    }
    return deltas;
  }

  private event(json: ChatJson & ResponsesJson): string | undefined {
    if (this.backend === "responses") {
      if (json.type === "response.output_text.delta" && json.delta) {
        this.generation.text += json.delta;
        return json.delta;
      }
      if (json.type === "response.completed" || json.type === "response.incomplete")
        this.finished(json.response ?? {});
      return undefined;
    }
    applyUsage(this.generation, json.usage);
    const choice = json.choices?.[0];
    if (choice?.finish_reason === "length") this.generation.truncated = true;
    const text = choice?.delta?.content;
    if (!text) return undefined;
    this.generation.text += text;
    return text;
  }

  private finished(r: ResponsesJson): void {
    this.generation.text = responsesText(r);
    this.generation.truncated = r.status === "incomplete";
    applyUsage(this.generation, r.usage);
  }
}
