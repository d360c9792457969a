/**
 * `llmd bench`'s driver: replays a scenario's workload over HTTP in wall time against any
 * OpenAI-compatible URL (open-loop arrivals on their schedule, closed-loop follow-ups after
 * completions) and records the same client-side metrics as the fleet simulator, with each
 * request's identity headers (objective, fairness id) and its outcome named the fleet's way. With
 * `responses`, each chain's turns (`WorkloadRequest.chainId`) go to `/v1/responses` as a stored
 * conversation: a turn after a served one sends only its new segments with `previous_response_id`.
 */
import { Agent } from "undici";
import { IdealPrefixCache } from "../measure/ideal-cache.ts";
import { type RequestRecord, recordFor } from "../measure/records.ts";
import {
  completionBody,
  type ClientIdentity,
  requestHeaders,
  responsesBody,
} from "../workload/client-wire.ts";
import { clientIdentity, type Scenario } from "../workload/scenario.ts";
import { createWorkload } from "../workload/index.ts";
import { SyntheticPromptBuilder } from "../workload/synthetic-prompt.ts";
import type { Arrival, Segment, Workload, WorkloadRequest } from "../workload/types.ts";
import { type StreamOutcome, streamCompletion } from "./stream-request.ts";
import { streamResponse } from "./stream-response.ts";

/** Options of a live run. */
export interface LiveRunOptions {
  /** The server's base URL, or several taken in turn request by request (a balancer without affinity). */
  url: string | readonly string[];
  model: string;
  workload: Workload;
  prompts: SyntheticPromptBuilder;
  /** Arrivals at or after this workload time are not sent, ms. */
  durationMs: number;
  /** Workload time runs this many times faster than wall time (think times and gaps shrink). */
  timeScale: number;
  /** Block size used for the ideal ceiling (the server's KV block size). */
  blockTokens: number;
  /** Objective name → priority, for the records only (the server decides from its own objectives). */
  objectives?: Readonly<Record<string, number>>;
  onProgress?(elapsedMs: number, inFlight: number): void;
  /** Send only requests for which this holds (their follow-ups included); default: all. */
  sends?(request: WorkloadRequest): boolean;
  /** Workload time 0 as a `performance.now()` reading (default: when the run starts). */
  startedAt?: number;
  /** Tenants' API keys and objectives' TTFT targets the clients send. */
  clients?: ClientIdentity;
  /**
   * Send each chain's turns as a Responses conversation (`POST /v1/responses`, stored): a turn
   * whose chain has a served previous turn sends `previous_response_id` and only the segments
   * beyond those it shares with that turn; a first turn (or one after a failed turn) sends its
   * whole prompt. Requests without a `chainId` are sent as first turns.
   */
  responses?: boolean;
}

/** What a scenario decides of a live run: its model, workload, prompts, duration and objectives. */
export function scenarioReplay(
  scenario: Scenario,
): Pick<LiveRunOptions, "model" | "workload" | "prompts" | "durationMs" | "objectives" | "clients"> {
  const durationMs = scenario.durationS * 1000;
  return {
    model: scenario.model,
    workload: createWorkload(scenario.workload, { seed: scenario.seed, durationMs }),
    prompts: new SyntheticPromptBuilder(),
    durationMs,
    objectives: scenario.objectives,
    clients: clientIdentity(scenario),
  };
}

/**
 * Runs the workload to completion (every request answered or failed); records are in workload ms
 * (0 = start). `outcome` is undefined only for a request that got no answer at all (lost).
 */
export async function runLive(o: LiveRunOptions): Promise<RequestRecord[]> {
  const records: RequestRecord[] = [];
  const sent: WorkloadRequest[] = [];
  // Keep-alive (undici's pipelining 1): `pipelining: 0` opened a TCP connection per request, ~0.7 ms
  // of TTFT each on loopback that the fleet simulator does not model.
  const dispatcher = new Agent({ connections: 4096, bodyTimeout: 0, headersTimeout: 0 });
  const started = o.startedAt ?? performance.now();
  const now = () => (performance.now() - started) * o.timeScale;
  const inFlight = new Set<Promise<void>>();
  const urls = typeof o.url === "string" ? [o.url] : o.url;
  let sentCount = 0;
  const nextUrl = () => urls[sentCount++ % urls.length]!;
  const send = (arrival: Arrival): void => {
    if (arrival.atMs >= o.durationMs) return;
    const delay = Math.max(0, (arrival.atMs - now()) / o.timeScale);
    const task = sleep(delay).then(() => issue(arrival));
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  };
  const issue = async (arrival: Arrival): Promise<void> => {
    const r = arrival.request;
    const record = recordFor(r, now(), o.objectives ?? {});
    records.push(record);
    sent.push(r);
    const out = o.responses
      ? await sendTurn(r)
      : await streamCompletion(
          nextUrl(),
          JSON.stringify(completionBody(o.model, o.prompts.text(r.segments), r.outputTokens)),
          requestHeaders(r, o.clients),
          dispatcher,
        );
    const toWorkload = (at: number) => (at - started) * o.timeScale;
    // Building a long synthetic prompt takes the client ~10 ms per 50K tokens: not server latency.
    record.arrivalMs = toWorkload(out.sentAt);
    record.firstTokenMs = toWorkload(out.firstTokenAt);
    record.endMs = toWorkload(out.endAt);
    record.outputTokens = out.completionTokens;
    record.cachedTokens = out.cachedTokens;
    if (out.error) record.error = out.error;
    if (out.outcome) record.outcome = out.outcome;
    for (const next of o.workload.onComplete(r, record.endMs, !out.error)) send(next);
  };
  /** Chain id → its last served turn: the response id and the segments it was sent with. */
  const chains = new Map<string, { responseId: string; segments: readonly Segment[] }>();
  const sendTurn = async (r: WorkloadRequest): Promise<StreamOutcome> => {
    const segments = r.segments; // a getter in some workloads: read once
    const previous = r.chainId === undefined ? undefined : chains.get(r.chainId);
    const input = previous ? segments.slice(sharedLead(previous.segments, segments)) : segments;
    const body = responsesBody(o.model, o.prompts.text(input), r.outputTokens, previous?.responseId);
    const out = await streamResponse(
      nextUrl(),
      JSON.stringify(body),
      requestHeaders(r, o.clients),
      dispatcher,
    );
    if (r.chainId !== undefined) {
      if (!out.error && out.responseId) chains.set(r.chainId, { responseId: out.responseId, segments });
      else chains.delete(r.chainId);
    }
    return out;
  };
  for (let a = o.workload.nextArrival(); a && a.atMs < o.durationMs; a = o.workload.nextArrival()) {
    if (o.sends?.(a.request) ?? true) send(a);
  }
  const ticker = setInterval(() => o.onProgress?.(now(), inFlight.size), 500);
  while (inFlight.size > 0) await Promise.race(inFlight);
  clearInterval(ticker);
  await dispatcher.close();
  // The ideal ceiling is computed after the run, in send order, so its hashing never delays the
  // client's reading of first tokens (the fleet computes it at admission, which is the same order).
  const ideal = new IdealPrefixCache(o.blockTokens);
  sent.forEach((r, i) => {
    records[i]!.idealCachedTokens = ideal.lookupAndInsert(r.segments, r.inputTokens);
  });
  return records;
}

/** Length of the common leading run of equal `{ns, id, tokens}` segments of `a` and `b`. */
export function sharedLead(a: readonly Segment[], b: readonly Segment[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i]!.ns === b[i]!.ns && a[i]!.id === b[i]!.id && a[i]!.tokens === b[i]!.tokens) i++;
  return i;
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}
