/**
 * `POST /v1/completions`, `/v1/chat/completions` and `/v1/responses`: read and validate the body,
 * resolve the model, apply failure injection, tokenize, check the context window, plan the output,
 * then hand the request to a `GenerationRun`. Every refusal is an OpenAI error reply, never an
 * exception.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { badRequest, LlmdError } from "../../api/errors.ts";
import type { GenerationRequest } from "../../api/openai.ts";
import {
  type Parsed,
  parseChatRequest,
  parseCompletionRequest,
  parseJsonBody,
  parseResponsesRequest,
} from "../../api/openai-request.ts";
import type { SimContext } from "../context.ts";
import { promptTokenIds } from "../tokenizer.ts";
import { readBody, sendError } from "../http.ts";
import { chatFormat, completionFormat, type ResponseFormat, responsesFormat } from "./format.ts";
import { type Admitted, GenerationRun } from "./run.ts";
import { prepareLeg, transferLegOf } from "./transfer-leg.ts";

/** Serves one generation request of `kind`. */
export async function handleGeneration(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  kind: GenerationRequest["kind"],
): Promise<void> {
  const body = await readBody(ctx, req, res);
  if (!body.ok) return sendError(res, body.error);
  const json = parseJsonBody(body.text);
  if (!json.ok) return sendError(res, json.error);
  const parsed = parseKind(json.value, kind);
  if (!parsed.ok) return sendError(res, parsed.error);
  const leg = transferLegOf(ctx, json.value);
  if (!leg.ok) return sendError(res, leg.error);
  const admitted = admit(ctx, parsed.value.request, req.headers["x-return-error"]);
  if (!admitted.ok) return sendError(res, admitted.error);
  const job = await prepareLeg(ctx, res, leg.leg, admitted.value);
  if (job) new GenerationRun(ctx, res, job, parsed.value.format).start();
}

/** The body validated for the endpoint of `kind`, with the format its answer takes. */
function parseKind(
  body: Record<string, unknown>,
  kind: GenerationRequest["kind"],
): Parsed<{ request: GenerationRequest; format: ResponseFormat }> {
  if (kind === "responses") {
    const parsed = parseResponsesRequest(body);
    if (!parsed.ok) return parsed;
    return {
      ok: true,
      value: { request: parsed.value.generation, format: responsesFormat(parsed.value.echo) },
    };
  }
  const parsed = kind === "chat" ? parseChatRequest(body) : parseCompletionRequest(body);
  if (!parsed.ok) return parsed;
  return {
    ok: true,
    value: { request: parsed.value, format: kind === "chat" ? chatFormat : completionFormat },
  };
}

function admit(
  ctx: SimContext,
  request: GenerationRequest,
  forcedError: string | string[] | undefined,
): Parsed<Admitted> {
  const served = ctx.models.get(request.model);
  if (!served) {
    const error = new LlmdError("model_not_found", `The model \`${request.model}\` does not exist.`, {
      param: "model",
    });
    return { ok: false, error };
  }
  const injected = ctx.failures.pick(request.model, forcedError);
  if (injected) return { ok: false, error: injected };
  const promptIds = promptTokenIds(ctx.tokenizer, request.prompt);
  const tooLong = contextError(ctx.maxModelLen, promptIds.length, request);
  if (tooLong) return { ok: false, error: tooLong };
  if (queueFull(ctx)) {
    const error = new LlmdError("queue_full", "The waiting queue is full; retry later.");
    return { ok: false, error };
  }
  const output = ctx.planner.plan(request, promptIds.length);
  return { ok: true, value: { request, promptIds, lora: served.lora, output } };
}

/** True when the waiting queue is at its bound; reads engine stats only when it could be. */
function queueFull(ctx: SimContext): boolean {
  const limit = ctx.config["max-waiting-queue-length"];
  return ctx.driver.inFlight >= limit && ctx.driver.engine.stats().waiting >= limit;
}

/** vLLM's context-length errors, or null when prompt + requested output fit. */
function contextError(
  maxModelLen: number,
  promptTokens: number,
  request: GenerationRequest,
): LlmdError | null {
  const param = { chat: "messages", completion: "prompt", responses: "input" }[request.kind];
  const code = "context_length_exceeded";
  if (promptTokens >= maxModelLen) {
    const message =
      `This model's maximum context length is ${maxModelLen} tokens. However, your request has ` +
      `${promptTokens} input tokens. Please reduce the length of the input messages.`;
    return badRequest(message, param, code);
  }
  const maxTokens = request.maxTokens ?? 0;
  if (promptTokens + maxTokens <= maxModelLen) return null;
  const message =
    `This model's maximum context length is ${maxModelLen} tokens. However, you requested ` +
    `${promptTokens + maxTokens} tokens (${promptTokens} in the messages, ${maxTokens} in the completion). ` +
    "Please reduce the length of the messages or completion.";
  return badRequest(message, param, code);
}
