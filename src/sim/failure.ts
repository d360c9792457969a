/**
 * llm-d-inference-sim's failure injection: with probability `failure-injection-rate`% a generation
 * request fails with one of `failure-types` (picked uniformly); the `X-Return-Error: <status>`
 * request header forces a failure with that status deterministically.
 */
import { ERROR_CATALOGUE, type ErrorCode, LlmdError } from "../api/errors.ts";
import type { FAILURE_TYPES } from "./config.ts";

/** One injectable failure kind. */
export type FailureType = (typeof FAILURE_TYPES)[number];

const FAILURES: Record<FailureType, { code: ErrorCode; message: (model: string) => string }> = {
  rate_limit: { code: "rate_limit_exceeded", message: (m) => `Rate limit reached for ${m}` },
  invalid_api_key: { code: "invalid_api_key", message: () => "Incorrect API key provided." },
  context_length: {
    code: "context_length_exceeded",
    message: () =>
      "This model's maximum context length is exceeded. Please reduce the length of the messages.",
  },
  server_error: {
    code: "server_error",
    message: () => "The server is overloaded or not ready yet.",
  },
  invalid_request: {
    code: "invalid_request_error",
    message: () => "Invalid request parameters.",
  },
  model_not_found: {
    code: "model_not_found",
    message: (m) => `The model \`${m}\` does not exist.`,
  },
};

/** Decides injected failures for one server. */
export class FailureInjector {
  constructor(
    private readonly ratePercent: number,
    private readonly types: readonly FailureType[],
    private readonly random: () => number,
  ) {}

  /** The failure to return for this request, or null to serve it normally. */
  pick(model: string, forcedStatusHeader: string | string[] | undefined): LlmdError | null {
    if (typeof forcedStatusHeader === "string") return forced(model, Number(forcedStatusHeader));
    if (this.ratePercent <= 0 || this.types.length === 0 || this.random() * 100 >= this.ratePercent)
      return null;
    return failure(this.types[Math.floor(this.random() * this.types.length)]!, model);
  }
}

function failure(type: FailureType, model: string): LlmdError {
  const f = FAILURES[type];
  return new LlmdError(f.code, f.message(model));
}

function forced(model: string, status: number): LlmdError {
  const type = (Object.keys(FAILURES) as FailureType[]).find(
    (t) => ERROR_CATALOGUE[FAILURES[t].code].status === status,
  );
  if (type) return failure(type, model);
  const valid = Number.isInteger(status) && status >= 400 && status <= 599;
  return new LlmdError("injected_error", `Injected error with status ${status}`, {
    status: valid ? status : 500,
  });
}
