/**
 * Validation of OpenAI completions / chat request bodies into a `GenerationRequest`.
 * Total over any JSON value: never throws, returns the first problem as a 400 `LlmdError`
 * naming the parameter. Unknown fields are ignored, as vLLM does.
 */
import { badRequest, type LlmdError } from "./errors.ts";
import type { GenerationRequest, PromptInput } from "./openai.ts";
import { type ChatMessageLike, contentText, renderChat } from "./prompt.ts";

/** A parse outcome: the value, or the error to send. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: LlmdError };

type Body = Record<string, unknown>;

/** Largest `max_tokens` accepted before the context-length check (guards arithmetic on absurd values). */
export const MAX_TOKENS_LIMIT = 1 << 30;

const fail = (message: string, param: string | null): Parsed<never> => ({
  ok: false,
  error: badRequest(message, param),
});

/** Parses a JSON text into an object body, or a 400. */
export function parseJsonBody(text: string): Parsed<Body> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return fail(`Invalid JSON body: ${(err as Error).message}`, null);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return fail("Request body must be a JSON object", null);
  }
  return { ok: true, value: value as Body };
}

/** Validates a `POST /v1/completions` body. */
export function parseCompletionRequest(body: Body): Parsed<GenerationRequest> {
  const prompt = parsePrompt(body.prompt);
  if (!prompt.ok) return prompt;
  const echoText = "text" in prompt.value ? prompt.value.text : "";
  return parseCommon(body, "completion", prompt.value, echoText, body.max_tokens, "max_tokens");
}

/** Validates a `POST /v1/chat/completions` body; the prompt is `renderChat(messages)`. */
export function parseChatRequest(body: Body): Parsed<GenerationRequest> {
  const messages = parseMessages(body.messages);
  if (!messages.ok) return messages;
  const useNew = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null;
  const [maxValue, maxParam] = useNew
    ? [body.max_completion_tokens, "max_completion_tokens"]
    : [body.max_tokens, "max_tokens"];
  const prompt = { text: renderChat(messages.value) };
  return parseCommon(body, "chat", prompt, lastUserText(messages.value), maxValue, maxParam);
}

function parseCommon(
  body: Body,
  kind: GenerationRequest["kind"],
  prompt: PromptInput,
  echoText: string,
  maxValue: unknown,
  maxParam: string,
): Parsed<GenerationRequest> {
  if (typeof body.model !== "string" || body.model === "") return fail("`model` is required", "model");
  const maxTokens = optionalPositiveInt(maxValue, maxParam);
  if (!maxTokens.ok) return maxTokens;
  const flags = parseFlags(body);
  if (!flags.ok) return flags;
  const stop = parseStop(body.stop);
  if (!stop.ok) return stop;
  if (body.n !== undefined && body.n !== null && body.n !== 1) return fail("Only n=1 is supported", "n");
  const salt = body.cache_salt;
  if (salt !== undefined && salt !== null && typeof salt !== "string") {
    return fail("`cache_salt` must be a string", "cache_salt");
  }
  const priority = body.priority ?? undefined;
  if (priority !== undefined && !Number.isInteger(priority))
    return fail("`priority` must be an integer", "priority");
  const value: GenerationRequest = {
    kind,
    model: body.model,
    prompt,
    echoText,
    ...flags.value,
    maxTokens: maxTokens.value,
    stop: stop.value,
    cacheSalt: salt ?? undefined,
    priority: priority as number | undefined,
  };
  return { ok: true, value };
}

type Flags = Pick<GenerationRequest, "stream" | "includeUsage" | "ignoreEos">;

function parseFlags(body: Body): Parsed<Flags> {
  const stream = optionalBool(body.stream, "stream");
  if (!stream.ok) return stream;
  const ignoreEos = optionalBool(body.ignore_eos, "ignore_eos");
  if (!ignoreEos.ok) return ignoreEos;
  const options = body.stream_options;
  let includeUsage = false;
  if (options !== undefined && options !== null) {
    if (!stream.value)
      return fail("Stream options can only be defined when `stream=True`.", "stream_options");
    if (typeof options !== "object" || Array.isArray(options)) {
      return fail("`stream_options` must be an object", "stream_options");
    }
    const usage = optionalBool((options as Body).include_usage, "stream_options.include_usage");
    if (!usage.ok) return usage;
    includeUsage = usage.value;
  }
  return { ok: true, value: { stream: stream.value, includeUsage, ignoreEos: ignoreEos.value } };
}

function parsePrompt(prompt: unknown): Parsed<PromptInput> {
  if (typeof prompt === "string") {
    return prompt === ""
      ? fail("`prompt` must not be empty", "prompt")
      : { ok: true, value: { text: prompt } };
  }
  if (!Array.isArray(prompt) || prompt.length === 0) {
    return fail("`prompt` must be a non-empty string, array of strings or array of token ids", "prompt");
  }
  if (typeof prompt[0] === "number") return parseTokenIds(prompt);
  if (prompt.length > 1) return fail("Only one prompt per request is supported", "prompt");
  return parsePrompt(prompt[0]);
}

function parseTokenIds(ids: unknown[]): Parsed<PromptInput> {
  const out = new Uint32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id > 0xffffffff) {
      return fail(`\`prompt[${i}]\` must be a token id (non-negative integer)`, "prompt");
    }
    out[i] = id;
  }
  return { ok: true, value: { tokenIds: out } };
}

function parseMessages(messages: unknown): Parsed<ChatMessageLike[]> {
  if (!Array.isArray(messages) || messages.length === 0) {
    return fail("`messages` must be a non-empty array", "messages");
  }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as unknown;
    if (m === null || typeof m !== "object" || typeof (m as Body).role !== "string") {
      return fail(`\`messages[${i}]\` must be an object with a string \`role\``, "messages");
    }
    const content = (m as Body).content;
    if (content !== undefined && content !== null && typeof content !== "string" && !Array.isArray(content)) {
      return fail(`\`messages[${i}].content\` must be a string or an array of parts`, "messages");
    }
  }
  return { ok: true, value: messages as ChatMessageLike[] };
}

function lastUserText(messages: readonly ChatMessageLike[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") return contentText(messages[i]!.content);
  }
  return "";
}

function parseStop(stop: unknown): Parsed<string[]> {
  if (stop === undefined || stop === null) return { ok: true, value: [] };
  const list = typeof stop === "string" ? [stop] : stop;
  if (!Array.isArray(list) || !list.every((s) => typeof s === "string")) {
    return fail("`stop` must be a string or an array of strings", "stop");
  }
  return { ok: true, value: (list as string[]).filter((s) => s !== "") };
}

function optionalBool(value: unknown, param: string): Parsed<boolean> {
  if (value === undefined || value === null) return { ok: true, value: false };
  return typeof value === "boolean" ? { ok: true, value } : fail(`\`${param}\` must be a boolean`, param);
}

function optionalPositiveInt(value: unknown, param: string): Parsed<number | undefined> {
  if (value === undefined || value === null) return { ok: true, value: undefined };
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_TOKENS_LIMIT) {
    return fail(`\`${param}\` must be an integer between 1 and ${MAX_TOKENS_LIMIT}`, param);
  }
  return { ok: true, value };
}
