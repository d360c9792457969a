/**
 * One P/D request as llm-d's NixlConnector sidecar runs it (reference §5.2): a fresh
 * `x-request-id` for both legs, the prefill leg (one token, no stream, `do_remote_decode`), then
 * the decode leg with the prefill's `kv_transfer_params`, whose answer reports the prefill's
 * `cached_tokens`. `llmd sidecar` and the router running both legs (`--pd-legs router`) both call
 * {@link runTwoLegs}; they differ only in where the decode leg goes and how it reaches the client.
 */
import { randomUUID } from "node:crypto";
import type { Dispatcher } from "undici";
import { decodeBody, type JsonBody, prefillBody } from "./legs.ts";
import { type PrefillOutcome, type PrefillRetry, sendPrefill } from "./prefill-leg.ts";

/** Sends the decode leg; `cachedTokens` is what the client's usage must report. */
export type DecodeLeg<T> = (
  body: Buffer,
  headers: Readonly<Record<string, string>>,
  cachedTokens: number,
) => Promise<T>;

/** One request to run as two legs. */
export interface TwoLegRequest<T> {
  path: string;
  /** The client's body (the model already resolved). */
  body: JsonBody;
  /** Headers for both legs: the client's without hop-by-hop and P/D headers. */
  headers: Readonly<Record<string, string>>;
  /** The prefill endpoint's connection pool. */
  prefill: Dispatcher;
  retry: PrefillRetry;
  /** Aborts the prefill leg (client gone, drain timeout); the decode leg gets it from its caller. */
  signal?: AbortSignal | undefined;
  decode: DecodeLeg<T>;
}

/** The decode leg's result, or why there was no decode leg. */
export type TwoLegOutcome<T> = { kind: "decoded"; result: T } | Exclude<PrefillOutcome, { kind: "ready" }>;

/** `base` with the leg's request id and JSON body length. */
function legHeaders(base: Readonly<Record<string, string>>, requestId: string, body: Buffer) {
  return {
    ...base,
    "x-request-id": requestId,
    "content-type": "application/json",
    "content-length": String(body.length),
  };
}

/** Runs the prefill leg, then (if it is ready) the decode leg. Rejects only when `signal` aborts. */
export async function runTwoLegs<T>(request: TwoLegRequest<T>): Promise<TwoLegOutcome<T>> {
  const requestId = randomUUID();
  const prefill = Buffer.from(JSON.stringify(prefillBody(request.path, request.body)));
  const outcome = await sendPrefill(
    request.prefill,
    {
      path: request.path,
      headers: legHeaders(request.headers, requestId, prefill),
      body: prefill,
      signal: request.signal,
    },
    request.retry,
  );
  if (outcome.kind !== "ready") return outcome;
  const { kvTransferParams, cachedTokens } = outcome.answer;
  const decode = Buffer.from(JSON.stringify(decodeBody(request.body, kvTransferParams)));
  const result = await request.decode(decode, legHeaders(request.headers, requestId, decode), cachedTokens);
  return { kind: "decoded", result };
}
