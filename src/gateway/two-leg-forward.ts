/**
 * The gateway's side of a P/D request (src/disagg runs the legs): the decode leg goes through
 * {@link forward} (streaming, back-pressure, aborts) into a {@link CachedTokensSink}; a prefill that
 * answered with an error has that answer relayed to the client; a prefill that could not be reached
 * is left to the caller, which may try another prefill endpoint (the router) or answer 502 (the
 * sidecar, which knows no other).
 */
import type { IncomingHttpHeaders } from "node:http";
import { LlmdError } from "../api/errors.ts";
import type { JsonBody } from "../disagg/legs.ts";
import type { PrefillRetry } from "../disagg/prefill-leg.ts";
import { runTwoLegs } from "../disagg/two-legs.ts";
import type { Dispatcher } from "undici";
import { CachedTokensSink } from "./cached-tokens-sink.ts";
import { type ForwardOutcome, type ForwardRequest, forward, type Upstream } from "./forward.ts";
import { clientResponseHeaders } from "./headers.ts";
import { interruptOf } from "./interrupt.ts";
import { sendError } from "./respond.ts";
import type { ClientSink } from "./types.ts";

/** One request to run as two legs from the gateway. */
export interface TwoLegForwardRequest extends Omit<ForwardRequest, "body" | "headers" | "signal"> {
  /** As {@link ForwardRequest.signal}; an AbortSignal, which both legs follow. */
  signal?: AbortSignal | undefined;
  /** The client's body (the model already resolved). */
  body: JsonBody;
  /** Headers for both legs (hop-by-hop and P/D headers removed). */
  headers: Readonly<Record<string, string>>;
  /** The prefill endpoint, `host:port` (as the P/D header names it). */
  prefillHostPort: string;
  prefill: Dispatcher;
  decode: Upstream;
  retry: PrefillRetry;
}

/** The prefill endpoint did no work (connection failed, or it drains): nothing reached the client. */
export interface PrefillUnreachable {
  kind: "prefill-unreachable";
  message: string;
  draining: boolean;
}

/** The 502 answer for a prefill endpoint that cannot be reached. */
export function prefillUnreachable(hostPort: string, message: string): LlmdError {
  return new LlmdError("prefill_unreachable", `prefill endpoint ${hostPort} unreachable: ${message}`);
}

/** Runs both legs, answering on `sink` unless the prefill was unreachable. Never rejects. */
export async function forwardTwoLegs(
  request: TwoLegForwardRequest,
  sink: ClientSink,
): Promise<ForwardOutcome | PrefillUnreachable> {
  const client = new AbortController();
  const onClose = () => {
    if (!sink.writableFinished) client.abort(new Error("client disconnected"));
  };
  sink.once("close", onClose);
  const signal = request.signal ? AbortSignal.any([client.signal, request.signal]) : client.signal;
  try {
    const outcome = await runTwoLegs({
      path: request.path,
      body: request.body,
      headers: request.headers,
      prefill: request.prefill,
      retry: request.retry,
      signal,
      decode: (body, headers, cachedTokens) =>
        forward(
          request.decode,
          { ...request, body, headers, signal: interruptOf(signal) },
          new CachedTokensSink(sink, cachedTokens),
        ),
    });
    if (outcome.kind === "decoded") return outcome.result;
    if (outcome.kind === "unreachable")
      return { kind: "prefill-unreachable", message: outcome.message, draining: outcome.draining };
    relay(sink, request, outcome);
    const failure = `prefill endpoint ${request.prefillHostPort} answered ${outcome.status}`;
    return { kind: "done", cause: "error", status: outcome.status, usage: undefined, failure };
  } catch (reason) {
    return aborted(sink, reason);
  } finally {
    sink.off("close", onClose);
  }
}

/** The prefill's error answer, as it came, to the client. */
function relay(
  sink: ClientSink,
  request: TwoLegForwardRequest,
  refusal: { status: number; headers: IncomingHttpHeaders; body: Buffer },
): void {
  if (sink.headersSent || sink.destroyed) return;
  const { endpointKey, requestId, responseHeaders } = request;
  const headers = clientResponseHeaders(refusal.headers, endpointKey, requestId, responseHeaders);
  headers["content-length"] = refusal.body.length;
  sink.writeHead(refusal.status, headers);
  sink.end(refusal.body);
}

/** The prefill leg was aborted: by a drain or eviction (answered with its reason) or the client. */
function aborted(sink: ClientSink, reason: unknown): ForwardOutcome {
  if (reason instanceof LlmdError) {
    sendError(sink, reason);
    return {
      kind: "done",
      cause: reason.code === "evicted" ? "evicted" : "error",
      status: reason.status,
      usage: undefined,
    };
  }
  return { kind: "done", cause: "client-disconnect", status: 499, usage: undefined };
}
