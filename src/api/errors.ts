/**
 * The one error type of llmd and the catalogue of its codes. Each code has one HTTP status, one
 * OpenAI error `type` and, for requests the router drops, llm-d's `x-llm-d-request-dropped-reason`
 * value; docs/errors.md lists them (a test keeps the two in sync). Expected outcomes on hot paths
 * are values, not exceptions; throw an `LlmdError` at I/O and startup edges only.
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

/** Where a code arises, for the docs. */
export type ErrorOrigin = "request" | "admission" | "upstream" | "simulator" | "startup";

/** One catalogue entry. */
export interface ErrorSpec {
  status: number;
  origin: ErrorOrigin;
  /** One line for docs/errors.md: the condition this code names. */
  condition: string;
  droppedReason?: DroppedReason;
  /** Seconds a client should wait before retrying (`Retry-After`), when retrying can help. */
  retryAfterSeconds?: number;
}

/** A catalogue entry that names no drop: its status, where it arises and the condition. */
const entry = (origin: Exclude<ErrorOrigin, "admission">) => (status: number, condition: string) =>
  ({ status, origin, condition }) as const;
const request = entry("request");
const upstream = entry("upstream");
const simulator = entry("simulator");
const startup = entry("startup");

const drop = (status: number, droppedReason: DroppedReason, condition: string, retryAfterSeconds?: number) =>
  ({ status, origin: "admission", condition, droppedReason, retryAfterSeconds }) as const;

/** Every error code llmd answers or throws with. */
export const ERROR_CATALOGUE = {
  invalid_json: request(400, "The body is not a JSON object."),
  invalid_request: request(400, "A field is missing or of the wrong type or range; `param` names it."),
  duplicate_request_id: request(400, "The `x-request-id` is already queued or in flight."),
  previous_response_not_found: request(
    400,
    "`previous_response_id` names no stored response (unknown, deleted, expired or `store: false`; `llmd sim` stores none).",
  ),
  response_not_found: request(404, "No stored response of the caller's tenant has this id."),
  model_not_found: request(404, "No endpoint serves the requested model."),
  not_found: request(404, "No route for the path."),
  method_not_allowed: request(405, "The route exists for another method."),
  prefill_forbidden: request(
    403,
    "`x-prefiller-host-port` names an endpoint outside the allowed pool (`llmd sidecar --enable-ssrf-protection`).",
  ),
  request_too_large: request(413, "The body exceeds the size limit."),
  request_timeout: request(
    408,
    "The client sent its headers or body too slowly (`--header-timeout`, `--body-timeout`); the connection closes.",
  ),
  request_headers_too_large: request(431, "The request headers exceed node's header size limit."),
  request_bodies_full: {
    status: 429,
    origin: "request",
    condition:
      "The request bodies the router holds in memory would pass `--max-inflight-body-bytes`; the connection closes.",
    retryAfterSeconds: 1,
  },
  shed: drop(
    429,
    "rejected-saturated",
    "A sheddable request (priority < 0) was shed while the pool is saturated (legacy admission or `probabilistic-admitter`).",
    1,
  ),
  no_endpoint_picked: drop(
    429,
    "rejected-saturated",
    "Endpoints exist, but the scheduling filters left none for this request.",
    1,
  ),
  flow_control_saturated: drop(429, "rejected-saturated", "A flow-control queue is at its capacity.", 1),
  flow_control_ttl_expired: drop(429, "rejected-ttl-expired", "The request waited past its queue TTL.", 1),
  evicted: drop(429, "evicted", "Flow control evicted the running request for higher-priority traffic.", 1),
  no_endpoints: drop(503, "rejected-no-endpoints", "The pool has no ready endpoint for the model.", 5),
  client_cancelled: drop(503, "rejected-context-cancelled", "The client left while the request was queued."),
  shutting_down: drop(
    503,
    "rejected-shutting-down",
    "The router or `llmd sim` drains (SIGTERM): new and queued requests, and those still running at `--drain-timeout`.",
    1,
  ),
  store_unavailable: upstream(503, "The response store failed; the turn was not served or not stored."),
  upstream_failed: upstream(502, "The model server failed or closed early."),
  upstream_timeout: upstream(504, "The model server did not answer in time."),
  prefill_unreachable: upstream(
    502,
    "The P/D prefill endpoint could not be reached, or drains, after `--prefill-max-retries` retries.",
  ),
  internal_error: upstream(500, "A bug: an unexpected exception."),
  engine_rejected: simulator(400, "The engine refused the request (e.g. longer than the model's context)."),
  queue_full: simulator(429, "The engine's waiting queue is full."),
  kv_transfer_failed: simulator(
    503,
    "A P/D decode leg could not pull its KV from the prefill and `kv_load_failure_policy` is `fail`.",
  ),
  rate_limit_exceeded: simulator(429, "Injected failure `rate_limit`."),
  invalid_api_key: simulator(401, "Injected failure `invalid_api_key`."),
  context_length_exceeded: simulator(
    400,
    "Prompt plus requested output exceed the model context (vLLM's code; also injected `context_length`).",
  ),
  server_error: simulator(503, "Injected failure `server_error`."),
  invalid_request_error: simulator(400, "Injected failure `invalid_request` (llm-d-inference-sim's code)."),
  injected_error: simulator(
    500,
    "Forced by the `X-Return-Error: <status>` header; that status (500 when invalid).",
  ),
  invalid_config: startup(500, "The EndpointPickerConfig cannot be used."),
  invalid_scenario: startup(400, "A scenario file or value is invalid."),
  invalid_override: startup(400, "A `--set` is not `key=value`."),
  invalid_engine_options: startup(400, "An engine option is out of range."),
  invalid_endpoints_file: startup(400, "The endpoints file is malformed."),
  endpoints_file_unreadable: startup(400, "The endpoints file cannot be read."),
  no_endpoints_configured: startup(
    500,
    "No endpoint source: no `--endpoints`, endpoints file or discovery plugin.",
  ),
  invalid_option: startup(400, "A command-line flag has an invalid value."),
} as const satisfies Record<string, ErrorSpec>;

/** A catalogued error code. */
export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** Per-error details; `status` only for `injected_error`, whose status the client chooses. */
export interface LlmdErrorOptions {
  param?: string | null;
  retryAfterSeconds?: number;
  status?: number;
}

/** An error with a catalogued code; status, type and dropped reason come from the catalogue. */
export class LlmdError extends Error {
  readonly status: number;
  readonly type: OpenAIErrorType;
  readonly param: string | null;
  readonly droppedReason: DroppedReason | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: LlmdErrorOptions = {},
  ) {
    super(message);
    const spec: ErrorSpec = ERROR_CATALOGUE[code];
    this.name = "LlmdError";
    this.status = options.status ?? spec.status;
    this.type = openAIType(this.status);
    this.param = options.param ?? null;
    this.droppedReason = spec.droppedReason;
    this.retryAfterSeconds = options.retryAfterSeconds ?? spec.retryAfterSeconds;
  }
}

/** The OpenAI error `type` of a status. */
export function openAIType(status: number): OpenAIErrorType {
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
      : new LlmdError("internal_error", err instanceof Error ? err.message : String(err));
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
  code: ErrorCode = "invalid_request",
): LlmdError {
  return new LlmdError(code, message, { param });
}
