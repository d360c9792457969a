/**
 * Validation of OpenAI completions / chat / responses request bodies into a `GenerationRequest`.
 * Total over any JSON value: never throws, returns the first problem as a 400 `LlmdError`
 * naming the parameter. Unknown fields are ignored, as vLLM does.
 */
import { badRequest, LlmdError } from "./errors.ts";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "./json-depth.ts";
import type { GenerationRequest, PromptInput } from "./openai.ts";
import { type ChatMessageLike, contentText, renderChat } from "./prompt.ts";
import { itemsToMessages, parseInput, type ResponseRequestEcho } from "./responses.ts";
import { checkMessages, checkSamplingParams, MAX_TOKENS_LIMIT } from "./sampling-params.ts";

/** A parse outcome: the value, or the error to send. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: LlmdError };

type Body = Record<string, unknown>;

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
  if (nestedDeeperThan(value)) return fail(`Request body nests deeper than ${MAX_JSON_DEPTH} levels`, null);
  return { ok: true, value: value as Body };
}

/** Validates a `POST /v1/completions` body (sampling parameters with vLLM's rules, `sampling-params.ts`). */
export function parseCompletionRequest(body: Body): Parsed<GenerationRequest> {
  const invalid = checkSamplingParams(body, "completion");
  if (invalid) return { ok: false, error: invalid };
  const prompt = parsePrompt(body.prompt);
  if (!prompt.ok) return prompt;
  const echoText = "text" in prompt.value ? prompt.value.text : "";
  return parseCommon(body, "completion", prompt.value, echoText, body.max_tokens, "max_tokens");
}

/**
 * Validates a `POST /v1/chat/completions` body (messages and sampling parameters with vLLM's
 * rules, `sampling-params.ts`); the prompt is `renderChat(messages)`, without the generation prompt
 * when the body says `add_generation_prompt: false` (as vLLM renders it).
 */
export function parseChatRequest(body: Body): Parsed<GenerationRequest> {
  const invalid = checkSamplingParams(body, "chat");
  if (invalid) return { ok: false, error: invalid };
  const messages = parseMessages(body.messages);
  if (!messages.ok) return messages;
  const useNew = body.max_completion_tokens !== undefined && body.max_completion_tokens !== null;
  const [maxValue, maxParam] = useNew
    ? [body.max_completion_tokens, "max_completion_tokens"]
    : [body.max_tokens, "max_tokens"];
  const withGenerationPrompt = body.add_generation_prompt !== false;
  const prompt: PromptInput = {
    text: renderChat(messages.value, withGenerationPrompt),
    messages: messages.value,
    ...(withGenerationPrompt ? {} : { addGenerationPrompt: false }),
  };
  return parseCommon(body, "chat", prompt, lastUserText(messages.value), maxValue, maxParam);
}

/** A validated `POST /v1/responses` body: the generation it asks for and what its response repeats. */
export interface ResponsesRequest {
  generation: GenerationRequest;
  echo: ResponseRequestEcho;
}

/**
 * Validates a stateless `POST /v1/responses` body, as vLLM serves it without its response store:
 * the prompt is `renderChat(itemsToMessages(instructions, input))`, the same text as a chat request
 * with those messages, so both share prefix-cache blocks. With no store, `previous_response_id`
 * never names a known response; `store` is accepted and ignored; `background` needs a store and is
 * refused. `tools` are accepted and repeated, never called.
 */
export function parseResponsesRequest(body: Body): Parsed<ResponsesRequest> {
  const previous = body.previous_response_id;
  if (previous !== undefined && previous !== null) {
    if (typeof previous !== "string")
      return fail("`previous_response_id` must be a string", "previous_response_id");
    const message = `Previous response with id '${previous}' not found.`;
    const error = badRequest(message, "previous_response_id", "previous_response_not_found");
    return { ok: false, error };
  }
  const store = optionalBool(body.store, "store");
  if (!store.ok) return store;
  const background = optionalBool(body.background, "background");
  if (!background.ok) return background;
  if (background.value)
    return fail("`background` needs a response store; this server keeps none", "background");
  const instructions = body.instructions ?? null;
  if (instructions !== null && typeof instructions !== "string")
    return fail("`instructions` must be a string", "instructions");
  const items = parseInput(body.input);
  if (items instanceof LlmdError) return { ok: false, error: items };
  const messages = itemsToMessages(instructions, items);
  if (messages.length === 0) return fail("`input` must not be empty", "input");
  const echo = parseResponseEcho(body, instructions);
  if (!echo.ok) return echo;
  const prompt = { text: renderChat(messages), messages };
  const generation = parseCommon(
    body,
    "responses",
    prompt,
    lastUserText(messages),
    body.max_output_tokens,
    "max_output_tokens",
  );
  if (!generation.ok) return generation;
  const maxOutput = generation.value.maxTokens ?? null;
  return {
    ok: true,
    value: { generation: generation.value, echo: { ...echo.value, max_output_tokens: maxOutput } },
  };
}

/**
 * The sampling and tool fields a response repeats, validated as the simulator and the router both
 * take them (`max_output_tokens` is filled in later).
 */
export function parseResponseEcho(body: Body, instructions: string | null): Parsed<ResponseRequestEcho> {
  const temperature = optionalNumber(body.temperature, "temperature", 0, 2);
  if (!temperature.ok) return temperature;
  const topP = optionalNumber(body.top_p, "top_p", 0, 1);
  if (!topP.ok) return topP;
  const tools = body.tools ?? [];
  if (!Array.isArray(tools) || !tools.every((t) => t !== null && typeof t === "object" && !Array.isArray(t)))
    return fail("`tools` must be an array of tool objects", "tools");
  const toolChoice = body.tool_choice ?? "auto";
  if (typeof toolChoice !== "string" && (typeof toolChoice !== "object" || Array.isArray(toolChoice)))
    return fail("`tool_choice` must be a string or an object", "tool_choice");
  const parallel = body.parallel_tool_calls ?? true;
  if (typeof parallel !== "boolean")
    return fail("`parallel_tool_calls` must be a boolean", "parallel_tool_calls");
  const metadata = body.metadata ?? {};
  if (
    typeof metadata !== "object" ||
    Array.isArray(metadata) ||
    !Object.values(metadata).every((v) => typeof v === "string")
  )
    return fail("`metadata` must be an object of string values", "metadata");
  const value: ResponseRequestEcho = {
    instructions,
    max_output_tokens: null,
    temperature: temperature.value,
    top_p: topP.value,
    tools,
    tool_choice: toolChoice,
    parallel_tool_calls: parallel,
    metadata: metadata as Record<string, string>,
  };
  return { ok: true, value };
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
  const out = tokenIdArray(ids);
  if (typeof out === "number")
    return fail(`\`prompt[${out}]\` must be a token id (non-negative integer)`, "prompt");
  return { ok: true, value: { tokenIds: out } };
}

/** A token-id prompt's ids, or the index of the first value that is not a token id (an integer in [0, 2^32)). */
export function tokenIdArray(values: readonly unknown[]): Uint32Array | number {
  const out = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const id = values[i];
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id > 0xffffffff) return i;
    out[i] = id;
  }
  return out;
}

function parseMessages(messages: unknown): Parsed<ChatMessageLike[]> {
  const invalid = checkMessages(messages);
  return invalid ? { ok: false, error: invalid } : { ok: true, value: messages as ChatMessageLike[] };
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

function optionalNumber(value: unknown, param: string, min: number, max: number): Parsed<number | null> {
  if (value === undefined || value === null) return { ok: true, value: null };
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    return fail(`\`${param}\` must be a number between ${min} and ${max}`, param);
  }
  return { ok: true, value };
}

function optionalPositiveInt(value: unknown, param: string): Parsed<number | undefined> {
  if (value === undefined || value === null) return { ok: true, value: undefined };
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_TOKENS_LIMIT) {
    return fail(`\`${param}\` must be an integer between 1 and ${MAX_TOKENS_LIMIT}`, param);
  }
  return { ok: true, value };
}
