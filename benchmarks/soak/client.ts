/**
 * The soak benchmark's load, in a worker thread so its work never delays the router's event loop:
 * `streams` mode keeps N streaming completions in flight until the deadline; `backlog` mode sends
 * N requests with large bodies at once and waits for every answer.
 */
import { parentPort, workerData } from "node:worker_threads";
import { Agent, request } from "undici";

/** What the main thread asks for. */
export interface SoakJob {
  url: string;
  model: string;
  mode: "streams" | "backlog";
  concurrency: number;
  durationMs: number;
  bodyBytes: number;
  maxTokens: number;
}

/** A progress or final report. */
export interface SoakReport {
  done: boolean;
  sent: number;
  served: number;
  /** Status (or transport error code) → count, for every answer that was not a complete 200. */
  failures: Record<string, number>;
}

const job = workerData as SoakJob;
// 2,000 connections at once overflow the listen backlog while the router parses a burst of
// bodies: the client waits for its connection rather than failing it after undici's 10 s.
const dispatcher = new Agent({
  connections: job.concurrency + 16,
  bodyTimeout: 0,
  headersTimeout: 0,
  connectTimeout: 120_000,
});
const report: SoakReport = { done: false, sent: 0, served: 0, failures: {} };
const fail = (key: string) => {
  report.failures[key] = (report.failures[key] ?? 0) + 1;
};

function body(prompt: string, stream: boolean): Buffer {
  return Buffer.from(
    JSON.stringify({ model: job.model, prompt, max_tokens: job.maxTokens, ignore_eos: true, stream }),
  );
}

async function once(payload: Buffer, stream: boolean): Promise<void> {
  report.sent++;
  try {
    const res = await request(`${job.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: payload,
      dispatcher,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) fail(`${res.statusCode} ${/"code":"([^"]*)"/.exec(text)?.[1] ?? ""}`.trim());
    else if (stream && (!text.includes("[DONE]") || text.includes('"error"'))) fail("stream-cut");
    else report.served++;
  } catch (err) {
    fail(String((err as { code?: string }).code ?? "transport"));
  }
}

async function streams(): Promise<void> {
  const deadline = Date.now() + job.durationMs;
  const loop = async (i: number) => {
    const payload = body(`stream ${i} `.repeat(50), true);
    while (Date.now() < deadline) await once(payload, true);
  };
  await Promise.all(Array.from({ length: job.concurrency }, (_, i) => loop(i)));
}

async function backlog(): Promise<void> {
  // One body for every request: the client holds it once.
  const payload = body("x".repeat(job.bodyBytes), false);
  await Promise.all(Array.from({ length: job.concurrency }, () => once(payload, false)));
}

const ticker = setInterval(() => parentPort!.postMessage({ ...report }), 1000);
await (job.mode === "streams" ? streams() : backlog());
clearInterval(ticker);
await dispatcher.close();
parentPort!.postMessage({ ...report, done: true });
