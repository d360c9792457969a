/**
 * `npm run bench -- endpoints [--seconds S] [--servers N]`: cost of the endpoint pool.
 * 1. Extraction: µs per page for the llmd sim's real `/metrics` page and a large multi-engine
 *    vLLM page, against a naive split-lines/regex parser as the baseline.
 * 2. One GET of `/metrics` from an `llmd sim` in its own process: CPU µs of this process per GET
 *    for the pool's `HttpFetcher` against undici's `request()` with `AbortSignal.timeout` and
 *    `body.text()` (the straightforward client), in interleaved rounds.
 * 3. Live scraping: N simulators on loopback scraped at llm-d's 50 ms interval; scrapes per
 *    second and router CPU per scrape (process.cpuUsage, includes the simulators' own work).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { emptyMetrics } from "../src/endpoints/endpoint.ts";
import { HttpFetcher } from "../src/endpoints/http-fetcher.ts";
import { createExtractorSelector } from "../src/endpoints/metrics-extractor.ts";
import { EndpointPool } from "../src/endpoints/pool.ts";
import { parseEndpointList, staticSource } from "../src/endpoints/sources/static-source.ts";
import { parseSimConfig } from "../src/sim/config.ts";
import { type SimServer, startSimServer } from "../src/sim/server.ts";
import { startListener } from "./router/targets.ts";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const SECONDS = flag("seconds", 3);
const SERVERS = flag("servers", 8);

async function startSims(count: number): Promise<SimServer[]> {
  return Promise.all(
    Array.from({ length: count }, () => {
      const parsed = parseSimConfig({ model: "bench-model", port: 0, host: "127.0.0.1" });
      if (!parsed.ok) throw new Error(parsed.error);
      return startSimServer(parsed.config);
    }),
  );
}

/** Baseline: what a straightforward parser does (split, regex per line, map of every series). */
function naiveExtract(text: string): number {
  const series = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^([^\s{]+)(\{.*\})?\s+(\S+)/.exec(line);
    if (match && !line.startsWith("#")) series.set(match[1]! + (match[2] ?? ""), Number(match[3]));
  }
  let sum = 0;
  for (const [key, value] of series) if (key.startsWith("vllm:num_requests_waiting")) sum += value;
  return sum;
}

/** Best of 5 rounds of at least 100 ms each, after a warm-up, in µs per call (robust to a busy machine). */
function timePerCall(fn: () => void): number {
  for (let i = 0; i < 3000; i++) fn();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    let calls = 0;
    const start = performance.now();
    while (performance.now() - start < 100) {
      for (let i = 0; i < 50; i++) fn();
      calls += 50;
    }
    best = Math.min(best, ((performance.now() - start) * 1000) / calls);
  }
  return best;
}

async function extractionTable(simPage: string): Promise<void> {
  const fixture = readFileSync(
    new URL("../src/endpoints/testdata/vllm-metrics.txt", import.meta.url),
    "utf8",
  );
  const bigPage = Array.from({ length: 16 }, (_, i) =>
    fixture.replaceAll('engine="0"', `engine="${i}"`),
  ).join("");
  const extractor = createExtractorSelector()({});
  const metrics = emptyMetrics();
  const attributes = new Map<string, unknown>();
  const rows = [
    { page: "llmd sim /metrics", text: simPage },
    { page: "vLLM, 16 engines", text: bigPage },
  ].map(({ page, text }) => {
    const ours = timePerCall(() => extractor.extract(text, metrics, attributes));
    const naive = timePerCall(() => naiveExtract(text));
    return {
      page,
      KiB: (text.length / 1024).toFixed(1),
      lines: text.split("\n").length,
      "llmd µs/page": ours.toFixed(1),
      "naive µs/page": naive.toFixed(1),
      speedup: `${(naive / ours).toFixed(1)}x`,
    };
  });
  console.log("\nMetrics extraction (one page → EndpointMetrics)");
  console.table(rows);
}

/** Median and best CPU µs per call of each variant over interleaved rounds of `calls` awaited calls. */
async function cpuPerCall(
  variants: Record<string, () => Promise<unknown>>,
  rounds: number,
  calls: number,
): Promise<Record<string, { median: number; best: number }>> {
  const samples: Record<string, number[]> = {};
  for (const fn of Object.values(variants)) for (let i = 0; i < calls; i++) await fn();
  for (let round = 0; round < rounds; round++) {
    for (const [name, fn] of Object.entries(variants)) {
      const cpu = process.cpuUsage();
      for (let i = 0; i < calls; i++) await fn();
      const used = process.cpuUsage(cpu);
      (samples[name] ??= []).push((used.user + used.system) / calls);
    }
  }
  const result: Record<string, { median: number; best: number }> = {};
  for (const [name, values] of Object.entries(samples)) {
    values.sort((a, b) => a - b);
    result[name] = { median: values[Math.floor(values.length / 2)]!, best: values[0]! };
  }
  return result;
}

async function getTable(): Promise<void> {
  const cli = fileURLToPath(new URL("../src/cli/main.ts", import.meta.url));
  const sim = await startListener([
    cli,
    "sim",
    "--model",
    "bench-model",
    "--port",
    "0",
    "--host",
    "127.0.0.1",
  ]);
  const fetcher = new HttpFetcher();
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  try {
    const measured = await cpuPerCall(
      {
        "HttpFetcher (dispatch handler, one buffer)": () => fetcher.getText(sim.url, "/metrics"),
        "undici request() + body.text()": async () => {
          const signal = AbortSignal.timeout(1000);
          const response = await request(`${sim.url}/metrics`, { dispatcher: agent, signal });
          return response.body.text();
        },
      },
      15,
      300,
    );
    console.log(
      "\nOne GET /metrics from an llmd sim process (CPU of this process only, 15 interleaved rounds of 300)",
    );
    console.table(
      Object.entries(measured).map(([client, { median, best }]) => ({
        client,
        "median µs/GET": median.toFixed(0),
        "best µs/GET": best.toFixed(0),
      })),
    );
  } finally {
    await Promise.all([fetcher.close(), agent.close()]);
    sim.child.kill("SIGINT");
  }
}

async function scrapeTable(sims: SimServer[]): Promise<void> {
  const pool = new EndpointPool({
    source: staticSource(parseEndpointList(sims.map((s) => s.url).join(","))),
    scrapeIntervalMs: 50,
    log: () => {},
  });
  await pool.start();
  const before = { ...pool.counters() };
  const cpu = process.cpuUsage();
  const start = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const used = process.cpuUsage(cpu);
  const seconds = (performance.now() - start) / 1000;
  const after = pool.counters();
  await pool.stop();
  const scrapes = after.scrapesTotal - before.scrapesTotal;
  console.log(`\nLive scraping at 50 ms, ${sims.length} simulators on loopback, ${SECONDS} s`);
  console.table([
    {
      servers: sims.length,
      "scrapes/s": (scrapes / seconds).toFixed(0),
      "ideal/s": ((sims.length * 1000) / 50).toFixed(0),
      "poll errors": after.pollErrorsTotal - before.pollErrorsTotal,
      "CPU ms/s (router+sims)": ((used.user + used.system) / 1000 / seconds).toFixed(1),
      "CPU µs/scrape (router+sims)": ((used.user + used.system) / Math.max(scrapes, 1)).toFixed(0),
    },
  ]);
}

const sims = await startSims(SERVERS);
try {
  const simPage = await (await fetch(`${sims[0]!.url}/metrics`)).text();
  await extractionTable(simPage);
  await getTable();
  await scrapeTable(sims);
} finally {
  await Promise.all(sims.map((s) => s.close()));
}
