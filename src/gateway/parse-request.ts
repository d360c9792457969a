/**
 * Turns an HTTP request (path, headers, raw JSON body) into the scheduler's `SchedulingRequest`.
 * The prompt text is exactly what the simulator tokenizes (`renderChat` for chat), so prefix
 * hashing in the router and caching in the model server see the same structure.
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { badRequest, type LlmdError } from "../api/errors.ts";
import { type ChatMessageLike, renderChat } from "../api/prompt.ts";
import type { SchedulingRequest } from "../scheduler/framework/types.ts";

/** Request headers llm-d reads (current names first, legacy second). */
export const HEADER = {
  requestId: "x-request-id",
  objective: ["x-llm-d-inference-objective", "x-gateway-inference-objective"],
  fairnessId: ["x-llm-d-inference-fairness-id", "x-gateway-inference-fairness-id"],
  modelRewrite: ["x-llm-d-model-name-rewrite", "x-gateway-model-name-rewrite"],
} as const;

/** Fairness id when neither the header nor an agent identity names one. */
export const DEFAULT_FLOW = "default-flow";

/** InferenceObjective name → priority (higher = more important, negative = sheddable). */
export type ObjectiveMap = ReadonlyMap<string, number>;

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
  if (!Array.isArray(messages) || messages.length === 0) {
    return badRequest("'messages' must be a non-empty array", "messages");
  }
  for (const m of messages) {
    if (!m || typeof m !== "object" || typeof (m as { role?: unknown }).role !== "string") {
      return badRequest("each message needs a string 'role'", "messages");
    }
  }
  return renderChat(messages as ChatMessageLike[]);
}

function promptText(path: string, body: Record<string, unknown>): string | LlmdError {
  if (path === "/v1/chat/completions") return chatPrompt(body.messages);
  if (path === "/v1/completions") {
    if (body.prompt === undefined) return badRequest("'prompt' is required", "prompt");
    return completionPrompt(body.prompt);
  }
  // Embeddings are passed through and scheduled without prefix affinity.
  return "";
}

function parseJsonObject(raw: Buffer): Record<string, unknown> | LlmdError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString("utf8"));
  } catch (err) {
    return badRequest(`invalid JSON body: ${(err as Error).message}`, null, "invalid_json");
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
    return badRequest("request body must be a JSON object", null, "invalid_json");
  }
  return parsed as Record<string, unknown>;
}

/**
 * Parses one inference request. Returns a 400 error value for malformed JSON, a missing or empty
 * model (after the `x-llm-d-model-name-rewrite` override), or a missing prompt/messages.
 */
export function parseInferenceRequest(
  path: string,
  headers: Record<string, string>,
  raw: Buffer,
  objectives: ObjectiveMap,
): SchedulingRequest | LlmdError {
  const body = parseJsonObject(raw);
  if (body instanceof Error) return body;
  const model = firstHeader(headers, HEADER.modelRewrite) ?? body.model;
  if (typeof model !== "string" || model === "") return badRequest("'model' is required", "model");
  const text = promptText(path, body);
  if (typeof text !== "string") return text;
  const objective = firstHeader(headers, HEADER.objective);
  return {
    requestId: headers[HEADER.requestId] || randomUUID(),
    model,
    path,
    headers,
    promptText: text,
    body,
    bodyBytes: raw.length,
    priority: (objective && objectives.get(objective)) || 0,
    // Filled after request-header processors run (agent identity), see `resolveFairnessId`.
    fairnessId: firstHeader(headers, HEADER.fairnessId) ?? "",
    attributes: new Map(),
  };
}

/** Attribute key the agent-identity header processor writes. */
export const AGENT_IDENTITY_ATTRIBUTE = "agent-identity";

/** llm-d's rule: fairness header, else the agent identity attribute, else `default-flow`. */
export function resolveFairnessId(request: SchedulingRequest): void {
  if (request.fairnessId) return;
  const agent = request.attributes.get(AGENT_IDENTITY_ATTRIBUTE);
  request.fairnessId = typeof agent === "string" && agent ? agent : DEFAULT_FLOW;
}
