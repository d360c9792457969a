/**
 * Sends the prefill leg and reads its answer, retrying what llm-d's sidecar retries: 502, 503 and
 * 504 answers and connections that fail, up to `maxRetries` more times, `backoffMs` apart. Any
 * other answer is the prefill's verdict on the request (a 400 for a bad body, say) and goes back
 * to the client as it is: a request is never prefilled silently on the decode server instead.
 */
import type { IncomingHttpHeaders } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import { type PrefillAnswer, readPrefillAnswer } from "./legs.ts";

/** How the prefill leg retries (`--prefill-max-retries`, `--prefill-retry-backoff`). */
export interface PrefillRetry {
  maxRetries: number;
  backoffMs: number;
}

/** llm-d's defaults: no retry; 200 ms between attempts when retrying. */
export const DEFAULT_PREFILL_RETRY: PrefillRetry = { maxRetries: 0, backoffMs: 200 };

/** What the prefill leg came to. */
export type PrefillOutcome =
  | { kind: "ready"; answer: PrefillAnswer }
  /** The prefill answered with an error (retries exhausted for 502/503/504): relay it. */
  | { kind: "refused"; status: number; headers: IncomingHttpHeaders; body: Buffer }
  /**
   * No answer: the connection failed or broke, or the server is draining (503 `rejected-shutting-down`),
   * so it did no work and another prefill endpoint may take the request.
   */
  | { kind: "unreachable"; message: string; draining: boolean };

/** One prefill request. */
export interface PrefillRequest {
  path: string;
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  /** Aborts the leg (the client left, or a drain timed out). */
  signal?: AbortSignal | undefined;
}

const RETRIED_STATUSES = new Set([502, 503, 504]);

type Attempt = PrefillOutcome | { kind: "aborted"; error: unknown };

/** Sends `request` through `dispatcher` (a pool for the prefill endpoint); rejects only on abort. */
export async function sendPrefill(
  dispatcher: Dispatcher,
  request: PrefillRequest,
  retry: PrefillRetry,
): Promise<PrefillOutcome> {
  for (let attempt = 0; ; attempt++) {
    const outcome = await attemptOnce(dispatcher, request);
    if (outcome.kind === "aborted") throw outcome.error;
    if (attempt >= retry.maxRetries || !retried(outcome)) return outcome;
    // An abort during the wait rejects with the signal's own reason, as an aborted attempt does.
    await sleep(retry.backoffMs, undefined, { signal: request.signal }).catch(() => {
      throw request.signal?.reason;
    });
  }
}

function retried(outcome: PrefillOutcome): boolean {
  return (
    outcome.kind === "unreachable" || (outcome.kind === "refused" && RETRIED_STATUSES.has(outcome.status))
  );
}

async function attemptOnce(dispatcher: Dispatcher, request: PrefillRequest): Promise<Attempt> {
  let response: Dispatcher.ResponseData;
  try {
    response = await dispatcher.request({
      path: request.path,
      method: "POST",
      headers: request.headers,
      body: request.body,
      signal: request.signal,
    });
  } catch (error) {
    if (request.signal?.aborted) return { kind: "aborted", error: request.signal.reason };
    return { kind: "unreachable", message: (error as Error).message, draining: false };
  }
  let body: Buffer;
  try {
    body = Buffer.from(await response.body.arrayBuffer());
  } catch (error) {
    if (request.signal?.aborted) return { kind: "aborted", error: request.signal.reason };
    return { kind: "unreachable", message: (error as Error).message, draining: false };
  }
  const { statusCode: status, headers } = response;
  if (status === 503 && headers["x-llm-d-request-dropped-reason"] === "rejected-shutting-down")
    return { kind: "unreachable", message: "the prefill endpoint is shutting down", draining: true };
  if (status < 200 || status >= 300) return { kind: "refused", status, headers, body };
  return { kind: "ready", answer: readPrefillAnswer(parseJson(body)) };
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}
