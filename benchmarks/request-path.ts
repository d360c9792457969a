/**
 * `npm run bench -- request-path [--requests 100000] [--rounds 7] [--endpoints 2] [--prompt-kb 0] [--prompts unique|same]`: CPU time of the
 * router's own per-request work with the default config (examples/configs/default.yaml), without
 * HTTP: parse the body and headers, upstream header hygiene, identity and admission, placement
 * (producers, the profile's filters, scorers and picker, pre-request hooks), in-flight accounting,
 * first token, the answer's usage, completion and the request metrics. The same short unique
 * prompts as `bench router`'s closed loop (`hi <n>`), so its rows are the part of the router's CPU
 * per request that is not node:http, the upstream client or the sockets. Plugin timings (the
 * gateway samples 1 call in 8, sampled-scheduler.ts) are not taken here.
 * Prints the minimum and median over rounds (each `--requests` requests after as many unmeasured),
 * and the part before dispatch (parse, headers, admission, placement: what delays the upstream
 * write). `--prompt-kb` pads each prompt as `bench router`'s large case does; each request then
 * waits for the event loop's timers, so the prefix insert the router defers past dispatch counts
 * after it, as in the router. `--prompts same` sends every request `hi` (and its padding), so
 * after the first each one's whole prompt is held by an endpoint (a warm prefix, matched to its
 * end). The file runs unchanged in an older checkout, for a before/after.
 */
import { parseArgs } from "node:util";
import { loadConfig } from "../src/config/index.ts";
import { wallClock } from "../src/core/clock.ts";
import { createGatewayAdmission } from "../src/gateway/admission.ts";
import { upstreamRequestHeaders } from "../src/gateway/headers.ts";
import { InflightTracker } from "../src/gateway/inflight.ts";
import { GatewayMetrics } from "../src/gateway/metrics.ts";
import { flattenHeaders, parseInferenceRequest } from "../src/gateway/parse-request.ts";
import { DEFAULT_CONFIG_PATH } from "../src/gateway/router.ts";
import type { GatewayPool } from "../src/gateway/types.ts";
import { findUsage } from "../src/gateway/usage.ts";
import { RequestLifecycle } from "../src/lifecycle/lifecycle.ts";
import type { Placement } from "../src/lifecycle/placement.ts";
import { makeEndpoint } from "../src/scheduler/framework/testing.ts";
import type { SchedulingRequest } from "../src/scheduler/framework/types.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "100000" },
    rounds: { type: "string", default: "7" },
    endpoints: { type: "string", default: "2" },
    "prompt-kb": { type: "string", default: "0" },
    prompts: { type: "string", default: "unique" },
  },
});
const REQUESTS = Number(values.requests);
const MODEL = "bench-model";

const config = loadConfig({ path: DEFAULT_CONFIG_PATH });
const endpoints = Array.from({ length: Number(values.endpoints) }, (_, i) =>
  makeEndpoint(`sim-${i}`, { metrics: { cacheBlockSize: 16, cacheNumBlocks: 65_536 } }),
);
const pool = {
  candidates: () => endpoints,
  models: () => [MODEL],
  noteDispatched: () => {},
  markFailed: () => {},
} as unknown as GatewayPool;
const inflight = new InflightTracker();
const metrics = new GatewayMetrics(pool, inflight);
const lifecycle = new RequestLifecycle({
  scheduler: config.scheduler,
  objectives: new Map(),
  flowControlGate: false,
  flowControl: config.flowControl,
  plugins: config.plugins,
  clock: wallClock,
  endpoints: () => endpoints,
  registry: metrics.registry,
  onScheduled: (seconds) => metrics.scheduled(seconds),
});
const admission = createGatewayAdmission(lifecycle, pool, wallClock);

/** What node:http hands the router for `bench router`'s requests. */
const CLIENT_HEADERS = {
  host: "127.0.0.1:8080",
  connection: "keep-alive",
  "content-type": "application/json",
  "content-length": "52",
};
/** A `llmd sim` answer to `max_tokens: 1`. */
const ANSWER = Buffer.from(
  JSON.stringify({
    id: "cmpl-0123456789abcdef",
    object: "text_completion",
    created: 1764614400,
    model: MODEL,
    choices: [{ index: 0, text: " x", logprobs: null, finish_reason: "length", stop_reason: null }],
    usage: { prompt_tokens: 3, total_tokens: 4, completion_tokens: 1, prompt_tokens_details: null },
  }),
);

/** Padding after each prompt's `hi <n>` (`--prompt-kb`), as benchmarks/router/load.ts pads it. */
const PADDING = Number(values["prompt-kb"]) > 0 ? ` ${"x".repeat(Number(values["prompt-kb"]) * 1024)}` : "";

let sent = 0;
/** Wall ms spent before dispatch (parse through placement), summed over the round. */
let beforeDispatchMs = 0;

/** One request through the router's own work, as the gateway runs it (no sockets). */
function oneRequest(): void {
  const prompt = values.prompts === "same" ? "hi" : `hi ${sent++}`;
  const raw = Buffer.from(JSON.stringify({ model: MODEL, prompt: `${prompt}${PADDING}`, max_tokens: 1 }));
  const arrived = performance.now();
  const request = parseInferenceRequest("/v1/completions", flattenHeaders(CLIENT_HEADERS), raw);
  if (request instanceof Error) throw request;
  const series = metrics.forModel(MODEL);
  const started = performance.now();
  metrics.requestStarted(series);
  upstreamRequestHeaders(request.headers, request.requestId, raw.length);
  const lease = admission.admit(request, endpoints, undefined, () => {});
  if (lease instanceof Error || lease instanceof Promise) throw new Error("legacy admission is synchronous");
  const placement = place(request);
  beforeDispatchMs += performance.now() - arrived;
  const key = placement.target.metadata.key;
  inflight.add(key);
  lifecycle.firstToken(placement);
  const usage = findUsage(ANSWER);
  inflight.remove(key);
  lifecycle.complete(placement, "natural", usage);
  if (usage) metrics.usage(series, usage);
  lease.release(usage);
  metrics.requestEnded(series, (performance.now() - started) / 1000, 0, false);
}

function place(request: SchedulingRequest): Placement {
  const placement = lifecycle.place(request, endpoints);
  if (placement instanceof Error || placement instanceof Promise)
    throw new Error("the default config places synchronously");
  return placement;
}

/** Lets the timers run (the deferred prefix insert) between large requests, as the router's loop does. */
const timersRun = () => new Promise((resolve) => setTimeout(resolve, 0));

/** `REQUESTS` requests, each followed by a turn of timers when prompts are padded. */
async function requests(): Promise<void> {
  for (let i = 0; i < REQUESTS; i++) {
    oneRequest();
    if (PADDING) await timersRun();
  }
}

/** CPU µs per request and wall µs before dispatch per request, over `REQUESTS` requests (after as many unmeasured). */
async function round(): Promise<{ cpu: number; beforeDispatch: number }> {
  await requests();
  beforeDispatchMs = 0;
  const before = process.cpuUsage();
  await requests();
  const spent = process.cpuUsage(before);
  return {
    cpu: (spent.user + spent.system) / REQUESTS,
    beforeDispatch: (beforeDispatchMs * 1000) / REQUESTS,
  };
}

const rounds: { cpu: number; beforeDispatch: number }[] = [];
for (let i = 0; i < Number(values.rounds); i++) rounds.push(await round());
const sorted = (pick: (r: { cpu: number; beforeDispatch: number }) => number) =>
  rounds.map(pick).sort((a, b) => a - b);
const cpu = sorted((r) => r.cpu);
const beforeDispatch = sorted((r) => r.beforeDispatch);
const prompts = `${PADDING ? `${values["prompt-kb"]} KB` : "short"} prompts (${values.prompts})`;
console.log(
  `router per-request work, default config, ${endpoints.length} endpoints, ${prompts}, ${REQUESTS} requests × ${rounds.length} rounds`,
);
console.table([
  {
    "CPU µs/request (min)": cpu[0]!.toFixed(2),
    "CPU µs/request (median)": cpu[cpu.length >> 1]!.toFixed(2),
    "before dispatch µs (min)": beforeDispatch[0]!.toFixed(2),
    "before dispatch µs (median)": beforeDispatch[beforeDispatch.length >> 1]!.toFixed(2),
  },
]);
