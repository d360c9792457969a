/**
 * `llmd bench`'s driver: replays a scenario's workload over HTTP in wall time against any
 * OpenAI-compatible URL (open-loop arrivals on their schedule, closed-loop follow-ups after
 * completions) and records the same client-side metrics as the fleet simulator.
 */
import { Agent } from "undici";
import { IdealPrefixCache } from "../metrics/ideal-cache.ts";
import { newRecord, type RequestRecord } from "../metrics/records.ts";
import type { SyntheticPromptBuilder } from "../workloads/synthetic-prompt.ts";
import type { Arrival, Workload } from "../workloads/types.ts";
import { streamCompletion } from "./stream-request.ts";

/** Options of a live run. */
export interface LiveRunOptions {
  url: string;
  model: string;
  workload: Workload;
  prompts: SyntheticPromptBuilder;
  /** Arrivals at or after this workload time are not sent, ms. */
  durationMs: number;
  /** Workload time runs this many times faster than wall time (think times and gaps shrink). */
  timeScale: number;
  /** Block size used for the ideal ceiling (the server's KV block size). */
  blockTokens: number;
  onProgress?(elapsedMs: number, inFlight: number): void;
}

/** Runs the workload to completion; records are in workload ms (0 = start). */
export async function runLive(o: LiveRunOptions): Promise<RequestRecord[]> {
  const records: RequestRecord[] = [];
  const ideal = new IdealPrefixCache(o.blockTokens);
  // Keep-alive (undici's pipelining 1): `pipelining: 0` opened a TCP connection per request, ~0.7 ms
  // of TTFT each on loopback that the fleet simulator does not model.
  const dispatcher = new Agent({ connections: 4096, bodyTimeout: 0, headersTimeout: 0 });
  const started = performance.now();
  const now = () => (performance.now() - started) * o.timeScale;
  const inFlight = new Set<Promise<void>>();
  const send = (arrival: Arrival): void => {
    if (arrival.atMs >= o.durationMs) return;
    const delay = Math.max(0, (arrival.atMs - now()) / o.timeScale);
    const task = sleep(delay).then(() => issue(arrival));
    inFlight.add(task);
    void task.finally(() => inFlight.delete(task));
  };
  const issue = async (arrival: Arrival): Promise<void> => {
    const r = arrival.request;
    const record = newRecord(r.id, r.kind ?? "default", now(), r.inputTokens);
    records.push(record);
    record.idealCachedTokens = ideal.lookupAndInsert(r.segments, r.inputTokens);
    const headers: Record<string, string> = r.sessionId ? { "x-session-id": r.sessionId } : {};
    const body = { model: o.model, prompt: o.prompts.text(r.segments), maxTokens: r.outputTokens };
    const out = await streamCompletion(o.url, body, headers, dispatcher);
    const toWorkload = (at: number) => (at - started) * o.timeScale;
    // Building a long synthetic prompt takes the client ~10 ms per 50K tokens: not server latency.
    record.arrivalMs = toWorkload(out.sentAt);
    record.firstTokenMs = toWorkload(out.firstTokenAt);
    record.endMs = toWorkload(out.endAt);
    record.outputTokens = out.completionTokens;
    record.cachedTokens = out.cachedTokens;
    if (out.error) record.error = out.error;
    for (const next of o.workload.onComplete(r, record.endMs, !out.error)) send(next);
  };
  for (let a = o.workload.nextArrival(); a && a.atMs < o.durationMs; a = o.workload.nextArrival()) send(a);
  const ticker = setInterval(() => o.onProgress?.(now(), inFlight.size), 500);
  while (inFlight.size > 0) await Promise.race(inFlight);
  clearInterval(ticker);
  await dispatcher.close();
  return records;
}

function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}
