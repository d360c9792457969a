/**
 * `npm run bench -- soak [--mode streams|backlog] …`: the router under sustained load, in-process,
 * over `llmd sim` processes, with the load in a worker thread. Every 10 s (and at the end) it prints
 * the router process's RSS and heap, its event-loop delay (p99, max) and the requests sent, served
 * and failed, so flat memory and zero lost show as columns.
 *
 * - `streams` (default): `--streams 1000` streaming completions kept in flight for `--minutes 10`.
 * - `backlog`: `--requests 2000` requests with `--body-kb 800` bodies sent at once to a router whose
 *   flow control holds them (one request at a time per replica), with `--budget-mb` of held bodies
 *   (`--max-inflight-body-bytes`): beyond it, 429 `request_bodies_full`, never a crash.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { startSimReplicas } from "../src/cli/sim-replicas.ts";
import { tsWorker } from "../src/core/ts-worker.ts";
import { parseEndpointList } from "../src/endpoints/sources/static-source.ts";
import { startRouter } from "../src/gateway/router.ts";
import type { SoakJob, SoakReport } from "./soak/client.ts";

const { values } = parseArgs({
  options: {
    mode: { type: "string", default: "streams" },
    streams: { type: "string", default: "1000" },
    minutes: { type: "string", default: "10" },
    requests: { type: "string", default: "2000" },
    "body-kb": { type: "string", default: "800" },
    "budget-mb": { type: "string", default: "1024" },
    replicas: { type: "string", default: "2" },
  },
});
const mode = values.mode === "backlog" ? "backlog" : "streams";
const MODEL = "soak-model";

/** Everything queues in flow control: one request in flight per replica. */
const BACKLOG_CONFIG = `apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
featureGates: [flowControl]
plugins:
- {type: concurrency-detector, name: one, parameters: {maxConcurrency: 1, concurrencyMode: requests}}
- {type: queue-scorer}
- {type: max-score-picker}
schedulingProfiles: [{name: default, plugins: [{pluginRef: queue-scorer}, {pluginRef: max-score-picker}]}]
flowControl: {saturationDetector: {pluginRef: one}, defaultRequestTTL: 600s, defaultPriorityBand: {maxRequests: 100000, maxBytes: 100Gi}}
`;

const sims = await startSimReplicas({
  replicas: Number(values.replicas),
  basePort: 0,
  simArgs: [
    ...["--model", MODEL, "--host", "127.0.0.1", "--stream-interval", "4", "--max-num-seqs", "2048"],
    // Backlog prompts are 200K tokens: the simulators take them, fast, so the backlog drains.
    ...(mode === "backlog" ? ["--max-model-len", "1048576", "--speed", "100"] : []),
  ],
  stdio: "ignore",
});
const router = await startRouter({
  endpoints: parseEndpointList(sims.urls.join(",")),
  port: 0,
  log: () => {},
  ...(mode === "backlog"
    ? { config: BACKLOG_CONFIG, maxInflightBodyBytes: Number(values["budget-mb"]) * 2 ** 20 }
    : {}),
});
const delay = monitorEventLoopDelay({ resolution: 10 });
delay.enable();

const job: SoakJob = {
  url: router.url,
  model: MODEL,
  mode,
  concurrency: Number(mode === "streams" ? values.streams : values.requests),
  durationMs: Number(values.minutes) * 60_000,
  bodyBytes: Number(values["body-kb"]) * 1024,
  maxTokens: mode === "streams" ? 200 : 4,
};
console.log(
  `soak ${mode}: ${job.concurrency} ${mode === "streams" ? "streams" : "requests"} via ${router.url} over ${sims.urls.length} simulators`,
);
console.log("   s   rss MB  heap MB  loop p99 ms  loop max ms     sent   served  failed");
const started = performance.now();
let peakRss = 0;
const row = (r: SoakReport) => {
  const { rss, heapUsed } = process.memoryUsage();
  peakRss = Math.max(peakRss, rss);
  const failed = Object.values(r.failures).reduce((a, b) => a + b, 0);
  const cells = [
    ((performance.now() - started) / 1000).toFixed(0).padStart(4),
    (rss / 2 ** 20).toFixed(0).padStart(8),
    (heapUsed / 2 ** 20).toFixed(0).padStart(8),
    (delay.percentile(99) / 1e6).toFixed(1).padStart(12),
    (delay.max / 1e6).toFixed(1).padStart(12),
    String(r.sent).padStart(8),
    String(r.served).padStart(8),
    String(failed).padStart(7),
  ];
  console.log(cells.join(" "));
  delay.reset();
};

const final = await new Promise<SoakReport>((resolve, reject) => {
  const worker = tsWorker(new URL("./soak/client.ts", import.meta.url), job);
  let last = 0;
  worker.on("message", (r: SoakReport) => {
    if (r.done) {
      row(r);
      resolve(r);
    } else if (performance.now() - last >= 10_000) {
      last = performance.now();
      row(r);
    }
  });
  worker.on("error", reject);
});
console.log(
  `\npeak rss ${(peakRss / 2 ** 20).toFixed(0)} MB; failures by status: ${JSON.stringify(final.failures)}`,
);
await router.close();
await sims.stop();
