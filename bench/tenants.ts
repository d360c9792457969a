/**
 * `npm run bench -- tenants [--seconds 4] [--rates 40,240] [--sims 2] [--overhead 400]`: three tenants
 * through a live router with examples/configs/flow-control.yaml (bands 100 / 0 / −10, program-aware
 * fairness in band 0, utilization detector) in front of in-process simulators of bounded capacity
 * (max-num-seqs 4, 20 ms TTFT, 2 ms/token, 16 tokens: ≈ 75 req/s each):
 * - chat: latency-sensitive, priority 100, Poisson, 30 % of the rate;
 * - agents: priority 0, two programs (fairness ids) launching bursts of sub-agents, 40 %: program-a
 *   bursts of 8, program-b bursts of 4 twice as often (same mean demand);
 * - batch: priority −10, Poisson, 30 %.
 * Prints per load level and tenant: requests, served, rejected by reason, TTFT p50/p99, and the
 * Jain index of the two programs' served requests. Then flow control's added latency at low load:
 * the same config with and without the `flowControl` gate, requests alternating, one at a time.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { seededRandom } from "../src/core/random.ts";
import { parseEndpointList } from "../src/endpoints/sources/static-source.ts";
import { type Router, startRouter } from "../src/gateway/router.ts";
import { parseSimConfig } from "../src/sim/config.ts";
import { type SimServer, startSimServer } from "../src/sim/server.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "4" },
    rates: { type: "string", default: "40,240" },
    sims: { type: "string", default: "2" },
    overhead: { type: "string", default: "400" },
  },
});
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

interface Arrival {
  at: number;
  tenant: string;
  objective: string;
  fairnessId: string;
}

/** Arrival schedule (ms from start) of the three tenants at `rate` req/s for `seconds`. */
function schedule(rate: number, seconds: number, random: () => number): Arrival[] {
  const out: Arrival[] = [];
  const poisson = (tenant: string, objective: string, perSecond: number) => {
    for (let t = 0; ; ) {
      t += (-Math.log(1 - random()) / perSecond) * 1000;
      if (t >= seconds * 1000) return;
      out.push({ at: t, tenant, objective, fairnessId: tenant });
    }
  };
  const bursts = (program: string, size: number, perSecond: number) => {
    const period = (size / perSecond) * 1000;
    for (let t = random() * period; t < seconds * 1000; t += period) {
      for (let i = 0; i < size; i++)
        out.push({ at: t, tenant: program, objective: "agents", fairnessId: program });
    }
  };
  poisson("chat", "chat", rate * 0.3);
  poisson("batch", "batch", rate * 0.3);
  bursts("program-a", 8, rate * 0.2);
  bursts("program-b", 4, rate * 0.2);
  return out.sort((a, b) => a.at - b.at);
}

interface Outcome {
  tenant: string;
  status: number;
  reason: string;
  ttftMs: number;
  /** ms from the level's start when the response ended. */
  doneAt: number;
}

async function send(url: string, arrival: Arrival, started: number, t0: number): Promise<Outcome> {
  const res = await fetch(`${url}/v1/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-llm-d-inference-objective": arrival.objective,
      "x-llm-d-inference-fairness-id": arrival.fairnessId,
    },
    body: JSON.stringify({
      model: MODEL,
      prompt: `${arrival.tenant} ${arrival.at}`,
      max_tokens: 16,
      stream: true,
    }),
  });
  const reader = res.body?.getReader();
  let ttftMs = Number.NaN;
  for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read()) {
    if (Number.isNaN(ttftMs)) ttftMs = performance.now() - started;
  }
  return {
    tenant: arrival.tenant,
    status: res.status,
    reason:
      res.headers.get("x-llm-d-request-dropped-reason") ?? (res.status === 200 ? "" : `http-${res.status}`),
    ttftMs,
    doneAt: performance.now() - t0,
  };
}

async function drive(url: string, arrivals: readonly Arrival[]): Promise<Outcome[]> {
  const t0 = performance.now();
  const pending: Promise<Outcome>[] = [];
  for (const arrival of arrivals) {
    const wait = t0 + arrival.at - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(send(url, arrival, performance.now(), t0));
  }
  return Promise.all(pending);
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

const round = (x: number, digits = 1) => (Number.isFinite(x) ? Number(x.toFixed(digits)) : "-");

function tenantRows(level: string, outcomes: readonly Outcome[]) {
  const tenants = [...new Set(outcomes.map((o) => o.tenant))].sort();
  return tenants.map((tenant) => {
    const mine = outcomes.filter((o) => o.tenant === tenant);
    const served = mine.filter((o) => o.status === 200);
    const reasons = new Map<string, number>();
    for (const o of mine) if (o.status !== 200) reasons.set(o.reason, (reasons.get(o.reason) ?? 0) + 1);
    const ttfts = served.map((o) => o.ttftMs).sort((a, b) => a - b);
    return {
      load: level,
      tenant,
      requests: mine.length,
      served: served.length,
      rejected: [...reasons].map(([r, n]) => `${r}:${n}`).join(" ") || "-",
      "ttft p50 ms": round(quantile(ttfts, 0.5)),
      "ttft p99 ms": round(quantile(ttfts, 0.99)),
    };
  });
}

/** Jain's index of the two programs' requests served by `untilMs` (1 = equal service). */
function jain(outcomes: readonly Outcome[], untilMs: number): number {
  const served = (p: string) =>
    outcomes.filter((o) => o.tenant === p && o.status === 200 && o.doneAt <= untilMs).length;
  const [a, b] = [served("program-a"), served("program-b")];
  return a + b === 0 ? Number.NaN : (a + b) ** 2 / (2 * (a * a + b * b));
}

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
  const row = (name: string, xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return {
      router: name,
      requests: xs.length,
      "p50 ms": round(quantile(sorted, 0.5), 3),
      "p99 ms": round(quantile(sorted, 0.99), 3),
    };
  };
  const rows = [
    row("flowControl gate on", samples.gated),
    row("gate off (legacy admission)", samples.legacy),
  ];
  console.log("\nFlow control's added latency at low load (one request at a time, alternating):");
  console.table(rows);
  const p50 = (xs: number[]) =>
    quantile(
      [...xs].sort((a, b) => a - b),
      0.5,
    );
  console.log(`added p50: ${(p50(samples.gated) - p50(samples.legacy)).toFixed(3)} ms`);
  await Promise.all([gated.close(), legacy.close()]);
  await Promise.all(sims.map((s) => s.close()));
}

async function main(): Promise<void> {
  const seconds = Number(values.seconds);
  const rates = (values.rates ?? "").split(",").map(Number);
  const sims = await startBenchSims(Number(values.sims));
  const router = await routerOver(sims, CONFIG);
  const rows = [];
  const fairness = [];
  for (const [i, rate] of rates.entries()) {
    const level = `${rate} req/s`;
    const outcomes = await drive(router.url, schedule(rate, seconds, seededRandom(42 + i)));
    rows.push(...tenantRows(level, outcomes));
    fairness.push({ load: level, "jain, served while arriving": round(jain(outcomes, seconds * 1000), 3) });
  }
  console.log(
    `Three tenants, ${sims.length} simulators (max-num-seqs 4, ≈ 75 req/s each), ${seconds} s per level:`,
  );
  console.table(rows);
  console.table(fairness);
  await router.close();
  await Promise.all(sims.map((s) => s.close()));
  await overhead(Number(values.overhead));
}

await main();
