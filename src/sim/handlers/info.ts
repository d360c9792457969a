/**
 * The small endpoints: `GET /v1/models`, `GET /health`, `GET /ready`, `POST /tokenize` (vLLM's
 * shape) and `GET /metrics` (Prometheus text).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { badRequest, LlmdError } from "../../api/errors.ts";
import type { TokenizeResponse } from "../../api/openai.ts";
import { parseJsonBody } from "../../api/openai-request.ts";
import type { ChatMessageLike } from "../../api/prompt.ts";
import { encodeChat } from "../../tokenizer/chat.ts";
import type { SimContext } from "../context.ts";
import { readBody, sendError, sendJson } from "../http.ts";

/** `GET /v1/models`: the served base names and LoRA adapters. */
export function handleModels(ctx: SimContext, res: ServerResponse): void {
  sendJson(res, 200, { object: "list", data: ctx.modelCards });
}

/** `GET /health`: 200 with an empty body while the server runs, as vLLM. */
export function handleHealth(res: ServerResponse): void {
  res.writeHead(200, { "content-length": 0 });
  res.end();
}

/**
 * `GET /ready` and `/health/ready` (llm-d-inference-sim's readiness path): 200 while serving, 503
 * once draining, so a load balancer stops sending while `/health` (liveness) stays 200.
 */
export function handleReady(ctx: SimContext, res: ServerResponse): void {
  if (ctx.drain.isDraining) sendJson(res, 503, { status: "shutting down" });
  else sendJson(res, 200, { status: "ready" });
}

/** `GET /metrics`. */
export async function handleMetrics(ctx: SimContext, res: ServerResponse): Promise<void> {
  const text = await ctx.metrics.text();
  res.writeHead(200, {
    "content-type": ctx.metrics.registry.contentType,
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

/** `POST /tokenize` with `{prompt}` or `{messages}` (and an optional known `model`). */
export async function handleTokenize(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const body = await readBody(ctx, req, res);
  if (!body.ok) return sendError(res, body.error);
  const json = parseJsonBody(body.text);
  if (!json.ok) return sendError(res, json.error);
  const { model, prompt, messages } = json.value;
  if (model !== undefined && (typeof model !== "string" || !ctx.models.has(model))) {
    return sendError(res, new LlmdError("model_not_found", `The model \`${String(model)}\` does not exist.`));
  }
  let ids: Uint32Array;
  if (typeof prompt === "string") ids = ctx.tokenizer.encodePrompt(prompt);
  else if (
    Array.isArray(messages) &&
    messages.every((m) => m && typeof m === "object" && typeof m.role === "string")
  ) {
    ids = encodeChat(ctx.tokenizer, messages as ChatMessageLike[]);
  } else return sendError(res, badRequest("`prompt` (string) or `messages` (array) is required", "prompt"));
  const tokens = Array.from(ids);
  const reply: TokenizeResponse = { count: tokens.length, max_model_len: ctx.maxModelLen, tokens };
  sendJson(res, 200, reply);
}
