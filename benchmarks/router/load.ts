/**
 * The router benchmark's load generator, run in its own process (forked by benchmarks/router.ts) so
 * the client never competes with the measured proxy inside one event loop. Protocol over the IPC
 * channel: the parent sends one `LoadJob`; the worker warms up, sends `{ measuring: true }`, runs
 * the measured window and sends a `LoadResult`, then exits.
 */
import { Pool } from "undici";

/** One measurement: open loop at `rate` req/s, or closed loop with `concurrency` workers. */
export interface LoadJob {
  url: string;
  model: string;
  /** "unique": prompt `hi <n>` per request (the router's policy spreads them); "same": always `hi`. */
  prompts: "unique" | "same";
  seconds: number;
  warmupSeconds: number;
  rate?: number;
  concurrency?: number;
  /** Padding after the prompt's `hi <n>`, in bytes (a large-prompt request); 0 by default. */
  promptBytes?: number;
  /** Streams of this many tokens (`ignore_eos`), counting the SSE events relayed; else `max_tokens: 1`. */
  streamTokens?: number;
}

/** Latencies in ms (from the moment each request was handed to undici). */
export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  /** SSE events received in the window (streams only; one token each at `--stream-interval 1`). */
  events: number;
}

/** Counts SSE events (`\n\n` terminators) across the chunks of one stream. */
function eventsIn(chunk: Buffer, previousEndedWithNewline: boolean): number {
  let n = previousEndedWithNewline && chunk[0] === 10 ? 1 : 0;
  for (let i = chunk.indexOf(10); i >= 0 && i < chunk.length - 1; i = chunk.indexOf(10, i + 1))
    if (chunk[i + 1] === 10) n++;
  return n;
}

class Recorder {
  latencies: number[] = [];
  errors = 0;
  events = 0;
  private sent = 0;
  private readonly padding: string;

  constructor(private readonly job: LoadJob) {
    this.padding = job.promptBytes ? ` ${"x".repeat(job.promptBytes)}` : "";
  }

  private body(): string {
    const prompt = this.job.prompts === "same" ? "hi" : `hi ${this.sent++}`;
    const { model, streamTokens } = this.job;
    if (!streamTokens) return JSON.stringify({ model, prompt: prompt + this.padding, max_tokens: 1 });
    return JSON.stringify({ model, prompt, max_tokens: streamTokens, ignore_eos: true, stream: true });
  }

  async send(pool: Pool): Promise<void> {
    const body = this.body();
    const started = performance.now();
    try {
      const res = await pool.request({
        path: "/v1/completions",
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      if (this.job.streamTokens) await this.countEvents(res.body);
      else await res.body.dump();
      if (res.statusCode !== 200) this.errors++;
      else this.latencies.push(performance.now() - started);
    } catch {
      this.errors++;
    }
  }

  private async countEvents(body: AsyncIterable<Buffer>): Promise<void> {
    let newline = false;
    for await (const chunk of body) {
      this.events += eventsIn(chunk, newline);
      newline = chunk[chunk.length - 1] === 10;
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends every request due by now, so timer lateness never lowers the offered rate. */
async function openLoop(pool: Pool, job: LoadJob, rate: number, seconds: number): Promise<Recorder> {
  const recorder = new Recorder(job);
  const pending: Promise<void>[] = [];
  const interval = 1000 / rate;
  const total = Math.round(rate * seconds);
  const start = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
    for (; sent < due; sent++) pending.push(recorder.send(pool));
    await sleep(Math.max(0, start + sent * interval - performance.now()));
  }
  await Promise.all(pending);
  return recorder;
}

async function closedLoop(pool: Pool, job: LoadJob, concurrency: number, seconds: number): Promise<Recorder> {
  const recorder = new Recorder(job);
  const end = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) await recorder.send(pool);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return recorder;
}

function summarise(recorder: Recorder, seconds: number): LoadResult {
  const sorted = Float64Array.from(recorder.latencies).sort();
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
  return {
    requests: sorted.length,
    errors: recorder.errors,
    seconds,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    p999: at(0.999),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    events: recorder.events,
  };
}

async function run(job: LoadJob): Promise<void> {
  const connections = job.concurrency ?? 256;
  const pool = new Pool(job.url, { connections, pipelining: 1 });
  const measure = (seconds: number) =>
    job.rate ? openLoop(pool, job, job.rate, seconds) : closedLoop(pool, job, connections, seconds);
  await measure(job.warmupSeconds);
  process.send?.({ measuring: true });
  const started = performance.now();
  const recorder = await measure(job.seconds);
  const elapsed = (performance.now() - started) / 1000;
  process.send?.(summarise(recorder, elapsed));
  await pool.close();
  process.disconnect?.();
}

process.once("message", (job: LoadJob) => void run(job));
