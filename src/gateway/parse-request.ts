/**
 * Turns an HTTP request (path, headers, raw JSON body) into the scheduler's `SchedulingRequest`.
 * The prompt text is exactly what the simulator tokenizes (`renderChat` for chat), so prefix
 * hashing in the router and caching in the model server see the same structure.
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { badRequest, type LlmdError } from "../api/errors.ts";
import { parseJsonBytes } from "../api/json-bytes.ts";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../api/json-depth.ts";
import { type ChatMessageLike, renderChat } from "../api/prompt.ts";
import { checkMessages, checkSamplingParams } from "../api/sampling-params.ts";
import { DEFAULT_FAIRNESS_ID } from "../flow-control/identity.ts";
import type { SchedulingRequest } from "../scheduler/framework/types.ts";

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

/** Prompt text of a completions `prompt` (string, or a one-element string array). */
function completionPrompt(prompt: unknown): string | LlmdError {
  if (typeof prompt === "string") return prompt;
  if (Array.isArray(prompt) && prompt.every((p) => typeof p === "string")) return prompt.join("");
  // Token-id prompts carry no text; they are scheduled without prefix affinity.
  if (Array.isArray(prompt)) return "";
  return badRequest("'prompt' must be a string or an array", "prompt");
}

function chatPrompt(messages: unknown): string | LlmdError {
  return checkMessages(messages) ?? renderChat(messages as ChatMessageLike[]);
}

/** The prompt text, or the 400 for a bad prompt, bad messages or a bad sampling parameter. */
function promptText(path: string, body: Record<string, unknown>): string | LlmdError {
  if (path === "/v1/chat/completions") return checkSamplingParams(body, "chat") ?? chatPrompt(body.messages);
  if (path === "/v1/completions") {
    if (body.prompt === undefined) return badRequest("'prompt' is required", "prompt");
    return checkSamplingParams(body, "completion") ?? completionPrompt(body.prompt);
  }
  // Embeddings are passed through and scheduled without prefix affinity.
  return "";
}

function parseJsonObject(raw: Buffer): Record<string, unknown> | LlmdError {
  let parsed: unknown;
  try {
    parsed = parseJsonBytes(raw);
  } catch (err) {
    return badRequest(`invalid JSON body: ${(err as Error).message}`, null, "invalid_json");
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    return badRequest("request body must be a JSON object", null, "invalid_json");
  }
  if (nestedDeeperThan(parsed)) {
    return badRequest(`request body nests deeper than ${MAX_JSON_DEPTH} levels`, null, "invalid_json");
  }
  return parsed as Record<string, unknown>;
}

/**
 * Parses one inference request. Returns a 400 error value for malformed JSON, a missing or empty
 * model (after the `x-llm-d-model-name-rewrite` override), a missing prompt, bad messages (roles,
 * content parts) or a sampling parameter of the wrong type or range (vLLM's rules, on the body
 * already parsed). Priority and fairness id are left for the lifecycle's identity stage.
 */
export function parseInferenceRequest(
  path: string,
  headers: Record<string, string>,
  raw: Buffer,
): SchedulingRequest | LlmdError {
  const body = parseJsonObject(raw);
  if (body instanceof Error) return body;
  const model = firstHeader(headers, HEADER.modelRewrite) ?? body.model;
  if (typeof model !== "string" || model === "") return badRequest("'model' is required", "model");
  const text = promptText(path, body);
  if (typeof text !== "string") return text;
  return {
    requestId: headers[HEADER.requestId] || randomUUID(),
    model,
    path,
    headers,
    promptText: text,
    body,
    bodyBytes: raw.length,
    priority: 0,
    fairnessId: DEFAULT_FAIRNESS_ID,
    attributes: new Map(),
  };
}
