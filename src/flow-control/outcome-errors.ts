/**
 * The edge mapping from flow-control outcome values to catalogued `LlmdError`s (status, OpenAI
 * error type, `x-llm-d-request-dropped-reason` and `Retry-After` come from the catalogue).
 */
import { type ErrorCode, LlmdError } from "../api/errors.ts";
import type { FlowFinalOutcome } from "./types.ts";

/** Error code and message of every non-dispatched outcome. */
export const FLOW_OUTCOME_ERRORS: Readonly<
  Record<Exclude<FlowFinalOutcome, "dispatched">, { code: ErrorCode; message: string }>
> = {
  "rejected-saturated": {
    code: "flow_control_saturated",
    message: "request rejected: flow-control queue capacity exceeded",
  },
  "rejected-no-endpoints": {
    code: "no_endpoints",
    message: "request rejected: the pool has no endpoints to serve it",
  },
  "rejected-ttl-expired": {
    code: "flow_control_ttl_expired",
    message: "request rejected: waited longer than its queue TTL",
  },
  "rejected-context-cancelled": {
    code: "client_cancelled",
    message: "request cancelled by the client while queued",
  },
  "rejected-shutting-down": {
    code: "shutting_down",
    message: "request rejected: the router is shutting down",
  },
  evicted: { code: "evicted", message: "request evicted to serve higher-priority traffic" },
};

/** The error to answer a dropped request with; undefined for `dispatched`. */
export function flowOutcomeError(outcome: FlowFinalOutcome): LlmdError | undefined {
  if (outcome === "dispatched") return undefined;
  const { code, message } = FLOW_OUTCOME_ERRORS[outcome];
  return new LlmdError(code, message);
}
