/**
 * The bodies of llm-d's two legs (NixlConnector, reference §5.2–5.3). The prefill leg is the
 * client's body asking for one token, without streaming, with `kv_transfer_params` telling the
 * model server to keep the prompt's KV for a remote decode; the decode leg is the client's body as
 * sent plus the `kv_transfer_params` the prefill returned, so the decode server pulls that KV
 * instead of prefilling.
 */

/** A JSON request body. */
export type JsonBody = Record<string, unknown>;

/** What the prefill leg sends: a remote decode will pull this request's KV. */
export const PREFILL_KV_TRANSFER_PARAMS = Object.freeze({
  do_remote_decode: true,
  do_remote_prefill: false,
  remote_engine_id: null,
  remote_block_ids: null,
  remote_host: null,
  remote_port: null,
});

/** The inference paths whose requests run as two legs (llm-d's sidecar handles the same). */
export const TWO_LEG_PATHS: ReadonlySet<string> = new Set([
  "/v1/chat/completions",
  "/v1/completions",
  "/v1/messages",
  "/v1/responses",
  "/inference/v1/generate",
]);

/** Sets the limits present in `body` to 1, and `always` whether present or not. */
function limitToOne(body: JsonBody, always: string, ifPresent: readonly string[]): void {
  body[always] = 1;
  for (const name of ifPresent) if (body[name] !== undefined && body[name] !== null) body[name] = 1;
}

/** The prefill leg's body for a request to `path`: one output token, no stream. */
export function prefillBody(path: string, body: JsonBody): JsonBody {
  const out: JsonBody = { ...body, kv_transfer_params: { ...PREFILL_KV_TRANSFER_PARAMS }, stream: false };
  delete out.stream_options;
  if (path === "/v1/responses") out.max_output_tokens = 1;
  else if (path === "/inference/v1/generate") {
    const sampling = isObject(body.sampling_params) ? { ...body.sampling_params } : {};
    limitToOne(sampling, "max_tokens", ["min_tokens"]);
    out.sampling_params = sampling;
  } else if (path === "/v1/messages") out.max_tokens = 1;
  else limitToOne(out, "max_tokens", ["max_completion_tokens", "min_tokens"]);
  return out;
}

/**
 * The decode leg's body: the client's body with the prefill's `kv_transfer_params`; without them
 * (a model server with no KV connector returns none) the decode server prefills locally.
 */
export function decodeBody(body: JsonBody, kvTransferParams: JsonBody | undefined): JsonBody {
  if (!kvTransferParams) return body;
  return { ...body, kv_transfer_params: kvTransferParams };
}

/** What the decode leg needs from the prefill's answer. */
export interface PrefillAnswer {
  /** The prefill's `kv_transfer_params`, forwarded verbatim; absent when it returned none. */
  kvTransferParams: JsonBody | undefined;
  /** The prompt tokens the prefill found cached (`null` or absent counts as 0). */
  cachedTokens: number;
}

/** Reads a prefill's JSON answer (chat, completions, Responses or generate shape). */
export function readPrefillAnswer(answer: unknown): PrefillAnswer {
  const body = isObject(answer) ? answer : {};
  const params = body.kv_transfer_params;
  return {
    kvTransferParams: isObject(params) ? params : undefined,
    cachedTokens: cachedTokensOf(usageOf(body)) ?? 0,
  };
}

/** The `usage` object of an answer or stream event: top level, or a Responses event's `response`. */
export function usageOf(body: JsonBody): JsonBody | undefined {
  if (isObject(body.usage)) return body.usage;
  const response = body.response;
  return isObject(response) && isObject(response.usage) ? response.usage : undefined;
}

/** The details object that carries `cached_tokens`: OpenAI's chat/completions or Responses name. */
function detailsKey(usage: JsonBody): "prompt_tokens_details" | "input_tokens_details" {
  return "input_tokens" in usage && !("prompt_tokens" in usage)
    ? "input_tokens_details"
    : "prompt_tokens_details";
}

function cachedTokensOf(usage: JsonBody | undefined): number | undefined {
  if (!usage) return undefined;
  const details = usage[detailsKey(usage)];
  const cached = isObject(details) ? details.cached_tokens : undefined;
  return typeof cached === "number" ? cached : undefined;
}

/**
 * Sets the usage's `cached_tokens` to `cachedTokens` in place (llm-d's sidecar reports the
 * prefill's cache hit, which is where the prompt was computed); true when `body` had a usage.
 */
export function rewriteCachedTokens(body: JsonBody, cachedTokens: number): boolean {
  const usage = usageOf(body);
  if (!usage) return false;
  const key = detailsKey(usage);
  const details = usage[key];
  usage[key] = { ...(isObject(details) ? details : {}), cached_tokens: cachedTokens };
  return true;
}

function isObject(value: unknown): value is JsonBody {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
