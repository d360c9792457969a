/**
 * Type and range checks of the OpenAI sampling parameters and chat messages, with vLLM's rules
 * (its `SamplingParams` checks and request models): shared by the simulator, which refuses what
 * vLLM refuses, and the router, which answers 400 before any upstream work. The checks read the
 * already-parsed body once and never throw; the first problem is a 400 `LlmdError` whose `param`
 * names the field. `null` counts as absent, as in vLLM's optional fields. Fields not listed here
 * are left to the model server.
 */
import { badRequest, type LlmdError } from "./errors.ts";

/** Which body: `/v1/chat/completions` or `/v1/completions`. */
export type GenerationKind = "chat" | "completion";

/** Largest `max_tokens` accepted before the context-length check (guards arithmetic on absurd values). */
export const MAX_TOKENS_LIMIT = 1 << 30;

/** vLLM's default `--max-logprobs`: the most log-probabilities a request may ask for. */
export const MAX_LOGPROBS = 20;

/** Message roles of the chat API (OpenAI's, with the legacy `function`). */
export const CHAT_ROLES: ReadonlySet<string> = new Set([
  "system",
  "developer",
  "user",
  "assistant",
  "tool",
  "function",
]);

/** Content part types vLLM's chat parser accepts. */
export const CONTENT_PART_TYPES: ReadonlySet<string> = new Set([
  "text",
  "image_url",
  "image_embeds",
  "input_audio",
  "audio_url",
  "video_url",
  "file",
  "refusal",
  "thinking",
]);

/** `response_format.type` values vLLM serves. */
const RESPONSE_FORMAT_TYPES: ReadonlySet<string> = new Set([
  "text",
  "json_object",
  "json_schema",
  "structural_tag",
]);

/** A 64-bit seed's bounds (vLLM's `seed` is a C long). */
const SEED_BOUND = 2 ** 63;

type Body = Record<string, unknown>;
/** A check of one present (non-null) value: undefined when it fits, else the message. */
type Check = (value: unknown) => string | undefined;

const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

function number(inRange: (n: number) => boolean, range: string): Check {
  return (v) => (isNumber(v) && inRange(v) ? undefined : `must be a number ${range}`);
}

function integer(inRange: (n: number) => boolean, range: string): Check {
  return (v) => (isInt(v) && inRange(v) ? undefined : `must be an integer ${range}`);
}

const boolean: Check = (v) => (typeof v === "boolean" ? undefined : "must be a boolean");

const stop: Check = (v) =>
  typeof v === "string" || (Array.isArray(v) && v.every((s) => typeof s === "string"))
    ? undefined
    : "must be a string or an array of strings";

const maxTokens = integer((n) => n >= 1 && n <= MAX_TOKENS_LIMIT, `between 1 and ${MAX_TOKENS_LIMIT}`);

const responseFormat: Check = (v) => {
  if (!v || typeof v !== "object" || Array.isArray(v)) return "must be an object";
  const { type, json_schema: schema } = v as Body;
  if (typeof type !== "string" || !RESPONSE_FORMAT_TYPES.has(type)) {
    return `.type must be one of ${[...RESPONSE_FORMAT_TYPES].join(", ")}`;
  }
  if (type === "json_schema" && (!schema || typeof schema !== "object" || Array.isArray(schema))) {
    return ".json_schema must be an object when type is json_schema";
  }
  return undefined;
};

const streamOptions: Check = (v) => {
  if (!v || typeof v !== "object" || Array.isArray(v)) return "must be an object";
  for (const key of ["include_usage", "continuous_usage_stats"]) {
    const flag = (v as Body)[key];
    if (flag !== undefined && flag !== null && typeof flag !== "boolean") return `.${key} must be a boolean`;
  }
  return undefined;
};

/** Rules both endpoints share. */
const COMMON: [string, Check][] = [
  ["temperature", number((n) => n >= 0, ">= 0")],
  ["top_p", number((n) => n > 0 && n <= 1, "in (0, 1]")],
  ["top_k", integer((n) => n >= -1, ">= -1 (0 or -1 disables it)")],
  ["min_p", number((n) => n >= 0 && n <= 1, "in [0, 1]")],
  ["presence_penalty", number((n) => n >= -2 && n <= 2, "in [-2, 2]")],
  ["frequency_penalty", number((n) => n >= -2 && n <= 2, "in [-2, 2]")],
  ["repetition_penalty", number((n) => n > 0, "> 0")],
  ["max_tokens", maxTokens],
  ["min_tokens", integer((n) => n >= 0, ">= 0")],
  ["n", integer((n) => n >= 1, ">= 1")],
  ["stop", stop],
  ["seed", integer((n) => n >= -SEED_BOUND && n < SEED_BOUND, "in the 64-bit range")],
  ["stream", boolean],
  ["stream_options", streamOptions],
  ["ignore_eos", boolean],
  ["response_format", responseFormat],
];

const RULES: Record<GenerationKind, ReadonlyMap<string, Check>> = {
  chat: new Map([
    ...COMMON,
    ["max_completion_tokens", maxTokens],
    ["add_generation_prompt", boolean],
    ["logprobs", boolean],
    ["top_logprobs", integer((n) => n >= 0 && n <= MAX_LOGPROBS, `between 0 and ${MAX_LOGPROBS}`)],
  ]),
  completion: new Map([
    ...COMMON,
    ["logprobs", integer((n) => n >= 0 && n <= MAX_LOGPROBS, `between 0 and ${MAX_LOGPROBS}`)],
    ["echo", boolean],
  ]),
};

const present = (v: unknown): boolean => v !== undefined && v !== null;

/**
 * The first sampling-parameter problem of a chat or completions body, or undefined. Walks the
 * body's own keys (a request carries a handful), so a body without sampling fields costs a few
 * map lookups.
 */
export function checkSamplingParams(body: Body, kind: GenerationKind): LlmdError | undefined {
  const rules = RULES[kind];
  for (const key in body) {
    const check = rules.get(key);
    const value = body[key];
    if (!check || !present(value)) continue;
    const problem = check(value);
    if (problem) return badRequest(`\`${key}\` ${problem}, got ${describe(value)}`, key);
  }
  if (present(body.stream_options) && body.stream !== true) {
    return badRequest("`stream_options` can only be set when `stream` is true", "stream_options");
  }
  if (kind === "chat" && present(body.top_logprobs) && body.logprobs !== true) {
    return badRequest("`top_logprobs` needs `logprobs` set to true", "top_logprobs");
  }
  return undefined;
}

/**
 * The first problem of a chat `messages` array: not a non-empty array, a message that is not an
 * object, an unknown role, content that is neither a string, null nor an array of parts, a part
 * of an unknown type, or a text part without string text. `param` names the field
 * (`messages[2].role`).
 */
export function checkMessages(messages: unknown): LlmdError | undefined {
  if (!Array.isArray(messages) || messages.length === 0) {
    return badRequest("`messages` must be a non-empty array", "messages");
  }
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as unknown;
    if (m === null || typeof m !== "object" || Array.isArray(m)) {
      return badRequest(`\`messages[${i}]\` must be an object`, `messages[${i}]`);
    }
    const { role, content } = m as Body;
    if (typeof role !== "string" || !CHAT_ROLES.has(role)) {
      const roles = [...CHAT_ROLES].join(", ");
      return badRequest(
        `\`messages[${i}].role\` must be one of ${roles}, got ${describe(role)}`,
        `messages[${i}].role`,
      );
    }
    const problem = contentProblem(content, `messages[${i}].content`);
    if (problem) return problem;
  }
  return undefined;
}

function contentProblem(content: unknown, param: string): LlmdError | undefined {
  if (!present(content) || typeof content === "string") return undefined;
  if (!Array.isArray(content)) return badRequest(`\`${param}\` must be a string or an array of parts`, param);
  for (let j = 0; j < content.length; j++) {
    const part = content[j] as unknown;
    const where = `${param}[${j}]`;
    if (part === null || typeof part !== "object" || Array.isArray(part)) {
      return badRequest(`\`${where}\` must be an object with a \`type\``, where);
    }
    const { type, text } = part as Body;
    if (typeof type !== "string" || !CONTENT_PART_TYPES.has(type)) {
      const types = [...CONTENT_PART_TYPES].join(", ");
      return badRequest(`\`${where}.type\` must be one of ${types}, got ${describe(type)}`, `${where}.type`);
    }
    if (type === "text" && typeof text !== "string") {
      return badRequest(`\`${where}.text\` must be a string`, `${where}.text`);
    }
  }
  return undefined;
}

/**
 * A short rendering of a bad value for a message (long strings and structures cut). A structure
 * too deep to stringify (JSON.parse accepts nesting JSON.stringify overflows the stack on) is
 * named by its type.
 */
function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Array.isArray(value) ? "[…]" : "{…}";
  }
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}
