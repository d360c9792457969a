/**
 * The edge mapping from flow-control outcome values to `LlmdError` (status, OpenAI error type,
 * `x-llm-d-request-dropped-reason`, `Retry-After`), per llm-d's wire table.
 */
import { LlmdError } from "../api/errors.ts";
import type { FlowFinalOutcome } from "./types.ts";

interface OutcomeWire {
  status: number;
  code: string;
  message: string;
  /** Seconds; undefined = no Retry-After (the client is gone). */
  retryAfterSeconds: number | undefined;
}

/** Wire mapping of every non-dispatched outcome (exported so docs and tests share one table). */
export const FLOW_OUTCOME_WIRE: Readonly<Record<Exclude<FlowFinalOutcome, "dispatched">, OutcomeWire>> = {
  "rejected-saturated": {
    status: 429,
    code: "flow_control_saturated",
    message: "request rejected: flow-control queue capacity exceeded",
    retryAfterSeconds: 1,
  },
  "rejected-no-endpoints": {
    status: 503,
    code: "no_endpoints",
    message: "request rejected: the pool has no endpoints to serve it",
    retryAfterSeconds: 5,
  },
  "rejected-ttl-expired": {
    status: 429,
    code: "flow_control_ttl_expired",
    message: "request rejected: waited longer than its queue TTL",
    retryAfterSeconds: 1,
  },
  "rejected-context-cancelled": {
    status: 503,
    code: "client_cancelled",
    message: "request cancelled by the client while queued",
    retryAfterSeconds: undefined,
  },
  "rejected-shutting-down": {
    status: 503,
    code: "shutting_down",
    message: "request rejected: the router is shutting down",
    retryAfterSeconds: 1,
  },
  evicted: {
    status: 429,
    code: "evicted",
    message: "request evicted to serve higher-priority traffic",
    retryAfterSeconds: 1,
  },
};

/** The error to answer a dropped request with; undefined for `dispatched`. */
export function flowOutcomeError(outcome: FlowFinalOutcome): LlmdError | undefined {
  if (outcome === "dispatched") return undefined;
  const wire = FLOW_OUTCOME_WIRE[outcome];
  return new LlmdError(wire.code, wire.message, {
    status: wire.status,
    droppedReason: outcome,
    retryAfterSeconds: wire.retryAfterSeconds,
  });
}
