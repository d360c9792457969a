/**
 * `npm run bench -- tenants [--requests 400]`: what flow control adds to a request at low load.
 * Two routers with examples/configs/flow-control.yaml over the same two in-process simulators, one
 * with the `flowControl` gate and one without (legacy admission); small requests alternate between
 * them one at a time, and the table compares end-to-end latency quantiles.
 * The three tenants themselves run live with `llmd up` + `llmd bench` (docs/flow-control.md, "Live").
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { percentile } from "../src/measure/percentile.ts";
import { parseEndpointList } from "../src/endpoints/sources/static-source.ts";
import { type Router, startRouter } from "../src/gateway/router.ts";
import { parseSimConfig } from "../src/sim/config.ts";
import { type SimServer, startSimServer } from "../src/sim/server.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "400" } } });
const MODEL = "bench-model";
const CONFIG = readFileSync(
  fileURLToPath(new URL("../examples/configs/flow-control.yaml", import.meta.url)),
  "utf8",
);
const OBJECTIVES = new Map([
  ["chat", 100],
  ["agents", 0],
  ["batch", -10],
]);

const round = (x: number, digits = 1) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : "-");

/** Echo simulators of bounded capacity (max-num-seqs 4, 20 ms TTFT, 2 ms/token). */
async function startBenchSims(n: number): Promise<SimServer[]> {
  const parsed = parseSimConfig({
    model: MODEL,
    port: 0,
    host: "127.0.0.1",
    mode: "echo",
    "max-num-seqs": 4,
    "time-to-first-token": "20ms",
    "inter-token-latency": "2ms",
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return Promise.all(Array.from({ length: n }, () => startSimServer(parsed.config)));
}

function routerOver(sims: readonly SimServer[], config: string): Promise<Router> {
  return startRouter({
    config,
    endpoints: parseEndpointList(sims.map((s) => s.url).join(",")),
    port: 0,
    scrapeIntervalMs: 20,
    objectives: OBJECTIVES,
    log: () => {},
  });
}

/** End-to-end latency (ms) of one small non-streaming request. */
async function timedRequest(url: string, i: number): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-llm-d-inference-objective": "chat" },
    body: JSON.stringify({ model: MODEL, prompt: `hi ${i}`, max_tokens: 1 }),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`overhead request failed: ${res.status}`);
  return performance.now() - started;
}

/** Alternates requests between the two routers, one at a time, and compares latency quantiles. */
async function overhead(requests: number): Promise<void> {
  const sims = await startBenchSims(2);
  const gated = await routerOver(sims, CONFIG);
  const legacy = await routerOver(sims, CONFIG.replace("featureGates: [flowControl]\n", ""));
  const samples = { gated: [] as number[], legacy: [] as number[] };
  for (let i = 0; i < 50; i++) await timedRequest(i % 2 ? gated.url : legacy.url, i);
  for (let i = 0; i < requests; i++) {
    samples.gated.push(await timedRequest(gated.url, i));
    samples.legacy.push(await timedRequest(legacy.url, i));
  }
  const row = (name: string, xs: number[]) => ({
    router: name,
    requests: xs.length,
    "p50 ms": round(percentile(xs, 50), 3),
    "p99 ms": round(percentile(xs, 99), 3),
  });
  const rows = [
    row("flowControl gate on", samples.gated),
    row("gate off (legacy admission)", samples.legacy),
  ];
  console.log("\nFlow control's added latency at low load (one request at a time, alternating):");
  console.table(rows);
  const addedP50 = percentile(samples.gated, 50) - percentile(samples.legacy, 50);
  console.log(`added p50: ${addedP50.toFixed(3)} ms`);
  await Promise.all([gated.close(), legacy.close()]);
  await Promise.all(sims.map((s) => s.close()));
}

await overhead(Number(values.requests));
