/**
 * Turns an HTTP request (path, headers, raw JSON body) into the scheduler's `SchedulingRequest`.
 * The prompt text is exactly what the simulator tokenizes (`renderChat` for chat), so prefix
 * hashing in the router and caching in the model server see the same structure.
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { badRequest, type LlmdError } from "../api/errors.ts";
import { tokenIdArray } from "../api/openai-request.ts";
import { type JsonSkeleton, type LongStrings, parseJsonSkeleton } from "../api/json-bytes.ts";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../api/json-depth.ts";
import { type ChatMessageLike, renderChatParts, type TextPiece } from "../api/prompt.ts";
import { checkMessages, checkSamplingParams } from "../api/sampling-params.ts";
import { DEFAULT_FAIRNESS_ID } from "../flow-control/identity.ts";
import type { BodyHolder, SchedulingRequest } from "../scheduler/framework/types.ts";

/** Request headers the parser reads (current names first, legacy second). */
const HEADER = {
  requestId: "x-request-id",
  modelRewrite: ["x-llm-d-model-name-rewrite", "x-gateway-model-name-rewrite"],
} as const;

/** API paths the gateway schedules, with how each yields its prompt text. */
export const INFERENCE_PATHS = new Set(["/v1/chat/completions", "/v1/completions", "/v1/embeddings"]);

/** Lower-cased single-valued header map (repeated headers joined with `, `). */
export function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function firstHeader(headers: Record<string, string>, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = headers[name];
    if (value) return value;
  }
  return undefined;
}

/** One body's parsed value and its long strings (src/api/json-bytes.ts). */
type Parsed = { body: Record<string, unknown>; strings: LongStrings };

/**
 * The prompt of a completions `prompt` as pieces (a string, or an array of strings), as its ids (an
 * array of token ids, which the model server runs as they are, so the prefix producers key them
 * directly), or the 400. A batch of token-id prompts carries neither; it is scheduled without
 * prefix affinity.
 */
function completionPrompt(prompt: unknown, strings: LongStrings): TextPiece[] | Uint32Array | LlmdError {
  if (typeof prompt === "string") return [strings.piece(prompt)];
  if (!Array.isArray(prompt)) return badRequest("'prompt' must be a string or an array", "prompt");
  if (typeof prompt[0] === "number") {
    const ids = tokenIdArray(prompt);
    if (typeof ids !== "number") return ids;
    return badRequest(`'prompt[${ids}]' must be a token id (a non-negative integer)`, "prompt");
  }
  if (prompt.every((p) => typeof p === "string")) return prompt.map((p: string) => strings.piece(p));
  return [];
}

/**
 * The prompt as pieces, or the 400 for a bad prompt, bad messages or a bad sampling parameter.
 * The checks read the body with its long strings still placeholders (strings, so every type check
 * holds and nothing is decoded).
 */
function promptPieces(path: string, { body, strings }: Parsed): TextPiece[] | Uint32Array | LlmdError {
  if (path === "/v1/chat/completions") {
    const problem = checkSamplingParams(body, "chat") ?? checkMessages(body.messages);
    return problem ?? renderChatParts(body.messages as ChatMessageLike[], (text) => strings.piece(text));
  }
  if (path === "/v1/completions") {
    if (body.prompt === undefined) return badRequest("'prompt' is required", "prompt");
    return checkSamplingParams(body, "completion") ?? completionPrompt(body.prompt, strings);
  }
  // Embeddings are passed through and scheduled without prefix affinity.
  return [];
}

function parseJsonObject(raw: Buffer): Parsed | LlmdError {
  let parsed: JsonSkeleton;
  try {
    parsed = parseJsonSkeleton(raw);
  } catch (err) {
    return badRequest(`invalid JSON body: ${(err as Error).message}`, null, "invalid_json");
  }
  const { value, strings } = parsed;
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return badRequest("request body must be a JSON object", null, "invalid_json");
  }
  if (nestedDeeperThan(value)) {
    return badRequest(`request body nests deeper than ${MAX_JSON_DEPTH} levels`, null, "invalid_json");
  }
  return { body: value as Record<string, unknown>, strings };
}

/** The concatenation of `pieces`, byte pieces decoded (ASCII, so as Latin-1). */
function joinPieces(pieces: readonly TextPiece[]): string {
  let text = "";
  for (const piece of pieces)
    text +=
      typeof piece === "string"
        ? piece
        : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength).toString("latin1");
  return text;
}

/**
 * Parses one inference request. Returns a 400 error value for malformed JSON, a missing or empty
 * model (after the `x-llm-d-model-name-rewrite` override), a missing prompt, bad messages (roles,
 * content parts) or a sampling parameter of the wrong type or range (vLLM's rules, on the body
 * already parsed). Priority and fairness id are left for the lifecycle's identity stage.
 * `bodyHolder` owns `raw` when it is a reused receive buffer (set in the literal, so every request
 * has one shape).
 */
export function parseInferenceRequest(
  path: string,
  headers: Record<string, string>,
  raw: Buffer,
  bodyHolder?: BodyHolder,
): SchedulingRequest | LlmdError {
  const parsed = parseJsonObject(raw);
  if (parsed instanceof Error) return parsed;
  const { body, strings } = parsed;
  const model = firstHeader(headers, HEADER.modelRewrite) ?? strings.text(body.model);
  if (typeof model !== "string" || model === "") return badRequest("'model' is required", "model");
  const prompt = promptPieces(path, parsed);
  strings.resolveLazily();
  // An error's message quotes the values it names: worded again on the body as it really is.
  if (prompt instanceof Error) return promptPieces(path, parsed) as LlmdError;
  const ids = prompt instanceof Uint32Array ? prompt : undefined;
  const pieces = prompt instanceof Uint32Array ? [] : prompt;
  const request: SchedulingRequest = {
    requestId: headers[HEADER.requestId] || randomUUID(),
    model,
    path,
    headers,
    promptText: "",
    promptParts: pieces,
    body,
    bodyBytes: raw.length,
    priority: 0,
    fairnessId: DEFAULT_FAIRNESS_ID,
    attributes: new Map(),
    bodyHolder,
    tokens: ids,
    exactTokens: ids !== undefined,
    inputTokens: ids?.length,
  };
  if (pieces.every((piece) => typeof piece === "string")) request.promptText = joinPieces(pieces);
  else lazyPromptText(request, pieces);
  return request;
}

/** Makes `request.promptText` the concatenation of `pieces`, built (decoded) when first read. */
function lazyPromptText(request: SchedulingRequest, pieces: readonly TextPiece[]): void {
  let text: string | undefined;
  Object.defineProperty(request, "promptText", {
    get: () => {
      text ??= joinPieces(pieces);
      return text;
    },
    enumerable: true,
    configurable: true,
  });
}
