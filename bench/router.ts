/**
 * `npm run bench -- router [--seconds 5] [--rates 100,400] [--concurrency 32]`: what the router
 * adds per request. Zero-latency simulators (so only proxy cost shows) are reached directly,
 * through `llmd router` (default config) and through nginx (round-robin, 1 worker, `daemon off`,
 * when installed). Prints (a) p50/p99 latency at fixed open-loop rates, (b) closed-loop req/s.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { startSimReplicas } from "../src/gateway/sim-replicas.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    rates: { type: "string", default: "100,400" },
    concurrency: { type: "string", default: "32" },
  },
});
const SECONDS = Number(values.seconds);
const MODEL = "bench-model";
const BODY = JSON.stringify({ model: MODEL, prompt: "hi", max_tokens: 1 });
const CLI_MAIN = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));

async function waitLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  let seen = "";
  for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
    seen += chunk.toString();
    const match = pattern.exec(seen);
    if (match?.[1]) return match[1];
  }
  throw new Error(`process exited: ${seen}`);
}

async function startNginx(upstreams: string[]): Promise<{ url: string; child: ChildProcess } | undefined> {
  const binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => existsSync(p));
  if (!binary) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "llmd-nginx-"));
  const port = 18000 + Math.floor(Math.random() * 1000);
  const servers = upstreams.map((u) => `server ${new URL(u).host};`).join(" ");
  writeFileSync(
    join(dir, "nginx.conf"),
    `daemon off; worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 4096; }
http { access_log off; upstream sims { ${servers} keepalive 64; }
  server { listen 127.0.0.1:${port}; location / { proxy_pass http://sims; proxy_http_version 1.1;
    proxy_set_header Connection ""; proxy_buffering off; } } }`,
  );
  const child = spawn(binary, ["-p", dir, "-c", join(dir, "nginx.conf")], { stdio: "ignore" });
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { url: `http://127.0.0.1:${port}`, child };
}

async function once200(pool: Pool): Promise<number> {
  const started = performance.now();
  const { statusCode, body } = await pool.request({
    path: "/v1/completions",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: BODY,
  });
  await body.dump();
  if (statusCode !== 200) throw new Error(`status ${statusCode}`);
  return performance.now() - started;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

/** Open loop: one request every 1000/rate ms for SECONDS; latency percentiles in ms. */
async function atRate(url: string, rate: number): Promise<{ p50: number; p99: number; n: number }> {
  const pool = new Pool(url, { connections: 256 });
  const latencies: number[] = [];
  const pending: Promise<void>[] = [];
  const interval = 1000 / rate;
  const start = performance.now();
  for (let i = 0; i < rate * SECONDS; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(once200(pool).then((ms) => void latencies.push(ms)));
  }
  await Promise.all(pending);
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), n: latencies.length };
}

/** Closed loop with `concurrency` workers for SECONDS: requests per second. */
async function throughput(url: string, concurrency: number): Promise<number> {
  const pool = new Pool(url, { connections: concurrency });
  const end = performance.now() + SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await once200(pool);
        done++;
      }
    }),
  );
  await pool.close();
  return done / SECONDS;
}

const sims = await startSimReplicas({
  replicas: 2,
  basePort: 0,
  stdio: "ignore",
  simArgs: [
    "--model",
    MODEL,
    "--time-to-first-token",
    "0ms",
    "--inter-token-latency",
    "0ms",
    "--host",
    "127.0.0.1",
  ],
});
const router = spawn(
  process.execPath,
  [
    "--import",
    "tsx",
    CLI_MAIN,
    "router",
    "--port",
    "0",
    "--host",
    "127.0.0.1",
    "--endpoints",
    sims.urls.join(","),
  ],
  { stdio: ["ignore", "pipe", "inherit"] },
);
const routerUrl = await waitLine(router, /listening on (http:\/\/\S+)/);
const nginx = await startNginx(sims.urls);
if (!nginx) console.log("nginx not installed (apt-get install -y nginx): its rows are skipped");
const targets: [string, string][] = [
  ["direct (one sim)", sims.urls[0] as string],
  ["llmd router", routerUrl],
  ...(nginx ? ([["nginx round-robin", nginx.url]] as [string, string][]) : []),
];
for (const [, url] of targets) {
  const warm = new Pool(url);
  for (let i = 0; i < 200; i++) await once200(warm);
  await warm.close();
}

const rates = String(values.rates).split(",").map(Number);
const latencyRows: Record<string, string | number>[] = [];
for (const rate of rates) {
  for (const [name, url] of targets) {
    const r = await atRate(url, rate);
    latencyRows.push({
      target: name,
      "rate req/s": rate,
      requests: r.n,
      "p50 ms": r.p50.toFixed(3),
      "p99 ms": r.p99.toFixed(3),
    });
  }
}
console.log(`\n(a) latency at fixed rates, zero-latency simulators, ${SECONDS}s each`);
console.table(latencyRows);
const concurrency = Number(values.concurrency);
const throughputRows = [];
for (const [name, url] of targets)
  throughputRows.push({ target: name, concurrency, "req/s": Math.round(await throughput(url, concurrency)) });
console.log(`\n(b) closed-loop throughput, short prompt, router and nginx each on one core`);
console.table(throughputRows);

router.kill("SIGTERM");
await once(router, "exit");
nginx?.child.kill("SIGTERM");
await sims.stop();
