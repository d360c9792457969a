/**
 * `npm run bench -- request-path [--requests 100000] [--rounds 7] [--endpoints 2]`: CPU time of the
 * router's own per-request work with the default config (examples/configs/default.yaml), without
 * HTTP: parse the body and headers, upstream header hygiene, identity and admission, placement
 * (producers, the profile's filters, scorers and picker, pre-request hooks), in-flight accounting,
 * first token, the answer's usage, completion and the request metrics. The same short unique
 * prompts as `bench router`'s closed loop (`hi <n>`), so its rows are the part of the router's CPU
 * per request that is not node:http, the upstream client or the sockets. Plugin timings (the
 * gateway samples 1 call in 8, sampled-scheduler.ts) are not taken here.
 * Prints the minimum and median over rounds (each `--requests` requests after as many unmeasured).
 * The file runs unchanged in an older checkout, for a before/after.
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

let sent = 0;

/** One request through the router's own work, as the gateway runs it (no sockets). */
function oneRequest(): void {
  const raw = Buffer.from(JSON.stringify({ model: MODEL, prompt: `hi ${sent++}`, max_tokens: 1 }));
  const request = parseInferenceRequest("/v1/completions", flattenHeaders(CLIENT_HEADERS), raw);
  if (request instanceof Error) throw request;
  const series = metrics.forModel(MODEL);
  const started = performance.now();
  metrics.requestStarted(series);
  upstreamRequestHeaders(request.headers, request.requestId, raw.length);
  const lease = admission.admit(request, endpoints, undefined, () => {});
  if (lease instanceof Error || lease instanceof Promise) throw new Error("legacy admission is synchronous");
  const placement = place(request);
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

/** CPU µs per request over `REQUESTS` requests (after as many unmeasured). */
function round(): number {
  for (let i = 0; i < REQUESTS; i++) oneRequest();
  const before = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) oneRequest();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / REQUESTS;
}

const rounds = Array.from({ length: Number(values.rounds) }, round).sort((a, b) => a - b);
console.log(
  `router per-request work, default config, ${endpoints.length} endpoints, ${REQUESTS} requests × ${rounds.length} rounds`,
);
console.table([
  {
    "CPU µs/request (min)": rounds[0]!.toFixed(2),
    "CPU µs/request (median)": rounds[rounds.length >> 1]!.toFixed(2),
  },
]);
