/**
 * Drives fuzz cases (cases.ts) at a server over raw loopback sockets and checks what the edge
 * must guarantee: the server keeps answering, no 5xx for a client's mistake, nothing left running
 * or holding KV blocks afterwards, and a normal request served correctly at the end. Shared by
 * `npm run bench -- fuzz` and the fuzz tests.
 */
import { connect } from "node:net";
import type { Router } from "../../src/gateway/router.ts";
import { parseSimConfig } from "../../src/sim/config.ts";
import { type SimServer, startSimServer } from "../../src/sim/server.ts";
import { parseEndpointList } from "../../src/endpoints/sources/static-source.ts";
import { startRouter } from "../../src/gateway/router.ts";
import { type FuzzCase, type FuzzTarget, fuzzCases } from "./cases.ts";

export const FUZZ_MODEL = "fuzz-model";

/** The router's POST inference routes and the simulator's. */
export const ROUTER_TARGET: FuzzTarget = {
  model: FUZZ_MODEL,
  paths: ["/v1/completions", "/v1/chat/completions", "/v1/embeddings", "/v1/responses"],
};
export const SIM_TARGET: FuzzTarget = {
  model: FUZZ_MODEL,
  paths: ["/v1/completions", "/v1/chat/completions", "/v1/responses", "/tokenize"],
};

/** How long a case may take before the client gives up on it. */
const CASE_TIMEOUT_MS = 8000;

/** The outcome of one case: every status line read (pipelining answers several), or why none. */
export interface CaseResult {
  statuses: number[];
  /**
   * "answered", "closed" (no status line before the server closed), "reset" (we left), "timeout"
   * (everything sent, no answer in time), "unsent" (the client was still writing its slices when
   * its time ran out: its own slowness, not the server's).
   */
  outcome: "answered" | "closed" | "reset" | "timeout" | "unsent";
  head: string;
}

const STATUS_LINE = /(?:^|\r\n)HTTP\/1\.[01] (\d{3}) /g;

/** Sends one case on a fresh connection to `port`. */
export function sendCase(port: number, c: FuzzCase): Promise<CaseResult> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    let size = 0;
    let done = false;
    let sentAll = false;
    const finish = (outcome: CaseResult["outcome"]) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(received).toString("latin1");
      const statuses = [...text.matchAll(STATUS_LINE)].map((m) => Number(m[1]));
      resolve({
        statuses,
        outcome: statuses.length > 0 ? "answered" : outcome,
        head: text.slice(0, 400),
      });
    };
    const timer = setTimeout(() => finish(sentAll ? "timeout" : "unsent"), CASE_TIMEOUT_MS);
    socket.on("data", (chunk: Buffer) => {
      if (size < 1 << 20) received.push(chunk);
      size += chunk.length;
      if (c.end === "destroy-on-data") finish("reset");
    });
    socket.on("error", () => finish("closed"));
    socket.on("close", () => finish("closed"));
    socket.on("connect", async () => {
      for (const chunk of c.chunks) {
        if (done || socket.destroyed) return;
        socket.write(chunk);
        if (c.chunks.length > 2) await new Promise((r) => setImmediate(r));
      }
      sentAll = true;
      if (c.end === "half-close") socket.end();
      else if (c.end === "destroy") {
        // Let the bytes leave before the reset, so the server sees a request cut short.
        await new Promise((r) => setImmediate(r));
        finish("reset");
      }
    });
  });
}

/** A 5xx (or a hang) with what was sent and what came back. */
export interface FuzzFailure {
  kind: string;
  status: string;
  request: string;
  response: string;
}

/** Totals of a run. */
export interface FuzzReport {
  cases: number;
  byKind: Map<string, number>;
  /** "200", "400", … and "no answer (closed)", "left by client", "client timeout", "client still sending …". */
  byStatus: Map<string, number>;
  serverErrors: FuzzFailure[];
  /** Whole requests the client gave up on (no answer, connection still open): hangs. */
  hangs: FuzzFailure[];
  /**
   * Whole requests the server closed without an answer (some framing errors, half-closed
   * partial requests): reported, not a failure.
   */
  closedUnanswered: FuzzFailure[];
  seconds: number;
}

const increment = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);

function describe(c: FuzzCase, result: CaseResult, status: string): FuzzFailure {
  const request = Buffer.concat(c.chunks).toString("latin1");
  return {
    kind: c.kind,
    status,
    request: request.length > 300 ? `${request.slice(0, 300)}… (${request.length} bytes)` : request,
    response: result.head,
  };
}

/** Runs `count` cases of `seed` at `port`, `concurrency` at a time. */
export async function runFuzz(options: {
  port: number;
  target: FuzzTarget;
  seed: number;
  count: number;
  concurrency: number;
  onProgress?: (done: number) => void;
}): Promise<FuzzReport> {
  const started = performance.now();
  const report: FuzzReport = {
    cases: 0,
    byKind: new Map(),
    byStatus: new Map(),
    serverErrors: [],
    hangs: [],
    closedUnanswered: [],
    seconds: 0,
  };
  const cases = fuzzCases(options.seed, options.count, options.target);
  const worker = async () => {
    for (;;) {
      const next = cases.next();
      if (next.done) return;
      const c = next.value;
      const result = await sendCase(options.port, c);
      report.cases++;
      increment(report.byKind, c.kind);
      for (const status of result.statuses) {
        increment(report.byStatus, String(status));
        if (status >= 500) report.serverErrors.push(describe(c, result, String(status)));
      }
      if (result.outcome !== "answered") {
        const label = {
          closed: "no answer (closed)",
          reset: "left by client",
          timeout: "client timeout",
          unsent: "client still sending at its timeout",
        }[result.outcome];
        increment(report.byStatus, label);
        if (c.answerExpected && result.outcome === "timeout") report.hangs.push(describe(c, result, label));
        if (c.answerExpected && result.outcome === "closed" && report.closedUnanswered.length < 20)
          report.closedUnanswered.push(describe(c, result, label));
      }
      if (report.cases % 1000 === 0) options.onProgress?.(report.cases);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** Sum of every sample of `name` in a Prometheus text page (undefined if absent). */
export function metricTotal(text: string, name: string): number | undefined {
  let sum: number | undefined;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== " " && rest[0] !== "{") continue;
    sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

/** One named check and whether it held. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

async function metricsOf(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** Polls until `checks()` all hold or `timeoutMs` passes; returns the last result. */
async function settle(checks: () => Promise<Check[]>, timeoutMs: number): Promise<Check[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await checks();
    if (result.every((c) => c.ok) || Date.now() > deadline) return result;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The simulator holds no request, no KV block and no request body. */
export function simLeakChecks(sim: SimServer, label = "sim", timeoutMs = 5000): Promise<Check[]> {
  return settle(async () => {
    const text = await metricsOf(sim.url);
    const held = sim.context.bodies.heldBytes;
    return [
      ...["vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc"].map(
        (name) => {
          const value = metricTotal(text, name);
          return { name: `${label} ${name} = 0`, ok: value === 0, detail: String(value) };
        },
      ),
      { name: `${label} held request-body bytes = 0`, ok: held === 0, detail: String(held) },
    ];
  }, timeoutMs);
}

/** The router counts nothing in flight, in its tracker and in its gauges. */
export function routerLeakChecks(router: Router, timeoutMs = 5000): Promise<Check[]> {
  return settle(async () => {
    const text = await metricsOf(router.url);
    const inflight = router.gateway.inflight.total();
    const running = metricTotal(text, "llm_d_epp_request_running") ?? 0;
    return [
      { name: "router inflight.total() = 0", ok: inflight === 0, detail: String(inflight) },
      { name: "router llm_d_epp_request_running = 0", ok: running === 0, detail: String(running) },
    ];
  }, timeoutMs);
}

/** A normal completion and a normal stream are served correctly. */
export async function normalRequestChecks(url: string, label: string): Promise<Check[]> {
  const post = (body: unknown) =>
    fetch(`${url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const plain = await post({ model: FUZZ_MODEL, prompt: "after the storm", max_tokens: 4 });
  const json = (await plain.json()) as {
    choices?: { text?: string }[];
    usage?: { completion_tokens?: number };
  };
  const stream = await post({ model: FUZZ_MODEL, prompt: "after the storm", max_tokens: 4, stream: true });
  const events = await stream.text();
  const health = await fetch(`${url}/health`);
  await health.arrayBuffer();
  return [
    {
      name: `${label} serves a completion`,
      ok:
        plain.status === 200 &&
        typeof json.choices?.[0]?.text === "string" &&
        json.usage?.completion_tokens === 4,
      detail: `${plain.status} ${JSON.stringify(json).slice(0, 120)}`,
    },
    {
      name: `${label} serves a stream`,
      ok: stream.status === 200 && events.trimEnd().endsWith("data: [DONE]"),
      detail: `${stream.status} ${events.slice(-60)}`,
    },
    { name: `${label} /health 200`, ok: health.status === 200, detail: String(health.status) },
  ];
}

/**
 * Simulator flags for fuzzing: fast, a small context (so huge max_tokens end quickly), and the
 * router's fuzzing edge (header and body timeouts 2 s, body limit 1 MiB) so stalled cases end quickly.
 */
export async function startFuzzSim(): Promise<SimServer> {
  const parsed = parseSimConfig({
    model: FUZZ_MODEL,
    port: 0,
    host: "127.0.0.1",
    seed: 1,
    mode: "echo",
    "max-model-len": 256,
    "time-to-first-token": "2ms",
    "inter-token-latency": "1ms",
    speed: 50,
    "header-timeout": "2s",
    "body-timeout": "2s",
    "max-body-bytes": 1 << 20,
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return startSimServer(parsed.config);
}

/** A router over `sims`, with short header and body timeouts so stalled cases end quickly. */
export function startFuzzRouter(sims: readonly SimServer[]): Promise<Router> {
  return startRouter({
    endpoints: parseEndpointList(sims.map((s) => s.url).join(",")),
    port: 0,
    scrapeIntervalMs: 50,
    headerTimeoutMs: 2000,
    bodyTimeoutMs: 2000,
    maxBodyBytes: 1 << 20,
    log: () => {},
  });
}
