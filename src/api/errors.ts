/**
 * The one error type of llmd: a stable `code`, the HTTP `status` it maps to at the edge, and for
 * requests the router drops, llm-d's `x-llm-d-request-dropped-reason` value.
 * Expected outcomes on hot paths are values, not exceptions; throw this at I/O edges only.
 */
export type DroppedReason =
  | "rejected-saturated"
  | "rejected-ttl-expired"
  | "rejected-no-endpoints"
  | "rejected-context-cancelled"
  | "rejected-shutting-down"
  | "evicted";

/** OpenAI error `type` values used on the wire. */
export type OpenAIErrorType =
  | "invalid_request_error"
  | "not_found_error"
  | "rate_limit_error"
  | "server_error"
  | "service_unavailable";

export interface LlmdErrorOptions {
  status: number;
  type?: OpenAIErrorType;
  param?: string | null;
  droppedReason?: DroppedReason;
  /** Seconds a client should wait before retrying (sets `Retry-After`). */
  retryAfterSeconds?: number;
}

export class LlmdError extends Error {
  readonly status: number;
  readonly type: OpenAIErrorType;
  readonly param: string | null;
  readonly droppedReason: DroppedReason | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: string,
    message: string,
    options: LlmdErrorOptions,
  ) {
    super(message);
    this.name = "LlmdError";
    this.status = options.status;
    this.type = options.type ?? defaultType(options.status);
    this.param = options.param ?? null;
    this.droppedReason = options.droppedReason;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

function defaultType(status: number): OpenAIErrorType {
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status === 503) return "service_unavailable";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** OpenAI-style error body: `{"error":{message,type,param,code}}`. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | number | null };
}

/** Renders any thrown value as an OpenAI error body plus status and extra headers. */
export function toOpenAIError(err: unknown): {
  status: number;
  body: OpenAIErrorBody;
  headers: Record<string, string>;
} {
  const e =
    err instanceof LlmdError
      ? err
      : new LlmdError("internal_error", err instanceof Error ? err.message : String(err), { status: 500 });
  const headers: Record<string, string> = {};
  if (e.droppedReason) headers["x-llm-d-request-dropped-reason"] = e.droppedReason;
  if (e.retryAfterSeconds !== undefined) headers["retry-after"] = String(Math.ceil(e.retryAfterSeconds));
  return {
    status: e.status,
    body: { error: { message: e.message, type: e.type, param: e.param, code: e.code } },
    headers,
  };
}

/** Shorthand for a 400 invalid-request error naming the offending parameter. */
export function badRequest(
  message: string,
  param: string | null = null,
  code = "invalid_request",
): LlmdError {
  return new LlmdError(code, message, { status: 400, param });
}
