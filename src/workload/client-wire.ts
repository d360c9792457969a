/**
 * How a client presents a workload request on the wire, shared by the live load generator (which
 * sends it) and the fleet simulator (which schedules exactly what the router would have parsed):
 * the identity headers and the completions body, whose size the fleet computes without building
 * the prompt text.
 */
import type { WorkloadRequest } from "./types.ts";

/** Who the clients are, beyond what each request names. */
export interface ClientIdentity {
  /** Tenant name → the API key its client presents (`Authorization: Bearer …`). */
  apiKeys?: ReadonlyMap<string, string>;
  /** Objective name → TTFT target its clients send as `x-llm-d-slo-ttft-ms`. */
  ttftSloMs?: Readonly<Record<string, number>>;
}

/**
 * The headers a client sends with `request`: session, objective, fairness id, and from `identity`
 * the API key of the tenant named like the request's objective and the objective's TTFT target.
 */
export function requestHeaders(
  request: WorkloadRequest,
  identity: ClientIdentity = {},
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (request.sessionId) headers["x-session-id"] = request.sessionId;
  const objective = request.objective;
  if (objective) headers["x-llm-d-inference-objective"] = objective;
  if (request.fairnessId) headers["x-llm-d-inference-fairness-id"] = request.fairnessId;
  if (objective === undefined) return headers;
  const key = identity.apiKeys?.get(objective);
  if (key) headers.authorization = `Bearer ${key}`;
  const slo = identity.ttftSloMs?.[objective];
  if (slo !== undefined) headers["x-llm-d-slo-ttft-ms"] = String(slo);
  return headers;
}

/** The streaming completions body sent for a prompt. */
export function completionBody(model: string, prompt: string, maxTokens: number): Record<string, unknown> {
  return {
    model,
    prompt,
    max_tokens: maxTokens,
    stream: true,
    ignore_eos: true,
    stream_options: { include_usage: true },
  };
}

/** Byte length of `completionBody` serialised, for an ASCII prompt of `promptChars` characters. */
export function completionBodyBytes(model: string, promptChars: number, maxTokens: number): number {
  return Buffer.byteLength(JSON.stringify(completionBody(model, "", maxTokens))) + promptChars;
}

/**
 * The streaming Responses body sent for a turn: `input` is the whole prompt of a chain's first
 * turn, or only the new text of a turn chained on `previousResponseId`.
 */
export function responsesBody(
  model: string,
  input: string,
  maxTokens: number,
  previousResponseId?: string,
): Record<string, unknown> {
  return {
    model,
    input,
    max_output_tokens: maxTokens,
    stream: true,
    ignore_eos: true,
    ...(previousResponseId ? { previous_response_id: previousResponseId } : {}),
  };
}
