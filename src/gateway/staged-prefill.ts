/**
 * The gateway's host of `staged-prefill` plans: before the request itself, its endpoint gets the
 * prompt's leading token ids up to each cut as a `/v1/completions` request for one token, one after
 * another. Each stage finds the one before in the endpoint's prefix cache and prefills only its own
 * tokens; what arrived at the endpoint meanwhile runs between stages. A stage is a hint: whatever
 * it comes to (an error, no answer), the request is forwarded as it is.
 */
import type { Dispatcher } from "undici";

/** One request's stages. */
export interface StagedPrefillRequest {
  /** The model (or adapter) as forwarded: stages must share the request's cache. */
  model: string;
  tokens: Uint32Array;
  cuts: readonly number[];
  /** The body's `cache_salt`, if any (vLLM keeps salted prefixes apart). */
  cacheSalt?: string | undefined;
  headers: Readonly<Record<string, string>>;
  /** Stops the stages (the client left, eviction, drain). */
  signal: AbortSignal;
}

/** The stages answered with 2xx, sent until the first that did not or the signal; never rejects. */
export async function sendStages(dispatcher: Dispatcher, request: StagedPrefillRequest): Promise<number> {
  const { "content-length": _, ...headers } = request.headers;
  const requestId = headers["x-request-id"] ?? "";
  let answered = 0;
  for (const cut of request.cuts) {
    if (request.signal.aborted) break;
    try {
      const response = await dispatcher.request({
        path: "/v1/completions",
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "x-request-id": `${requestId}-stage-${answered}`,
        },
        body: stageBody(request, cut),
        signal: request.signal,
      });
      await response.body.dump();
      if (response.statusCode < 200 || response.statusCode >= 300) break;
      answered++;
    } catch {
      break;
    }
  }
  return answered;
}

/** `{"model":…,"prompt":[ids up to cut],"max_tokens":1,"stream":false}`, the ids written as digits directly. */
export function stageBody(
  request: Pick<StagedPrefillRequest, "model" | "tokens" | "cacheSalt">,
  cut: number,
): Buffer {
  const salt = request.cacheSalt === undefined ? "" : `,"cache_salt":${JSON.stringify(request.cacheSalt)}`;
  const head = Buffer.from(
    `{"model":${JSON.stringify(request.model)}${salt},"max_tokens":1,"stream":false,"prompt":[`,
  );
  const tail = Buffer.from("]}");
  const out = Buffer.allocUnsafe(head.length + cut * 11 + tail.length);
  let at = head.copy(out, 0);
  const ids = request.tokens;
  for (let i = 0; i < cut; i++) {
    if (i > 0) out[at++] = 44; // ","
    at = writeDigits(out, at, ids[i]!);
  }
  at += tail.copy(out, at);
  return out.subarray(0, at);
}

/** Writes `value` (an integer ≥ 0) in decimal at `at`; returns the offset after it. */
function writeDigits(out: Buffer, at: number, value: number): number {
  if (value < 10) {
    out[at] = 48 + value;
    return at + 1;
  }
  let digits = 1;
  for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
  for (let i = at + digits - 1, v = value; i >= at; i--, v = Math.floor(v / 10)) out[i] = 48 + (v % 10);
  return at + digits;
}
