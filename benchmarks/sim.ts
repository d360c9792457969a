/**
 * The simulator HTTP server's own overhead per request: engine latencies set to zero and engine time
 * run 10⁶× faster than wall time, so what remains is parsing, tokenizing, the driver loop, JSON/SSE
 * writing and the loopback hop (client included, same process). Prints p50/p99 latency and req/s for
 * sequential and concurrent requests, non-streaming and streaming.
 *
 *   npm run bench -- sim [--requests 4000] [--smoke]
 */
import { Pool } from "undici";
import { parseSimConfig } from "../src/sim/config.ts";
import { startSimServer } from "../src/sim/server.ts";

const smoke = process.argv.includes("--smoke");
const arg = process.argv.indexOf("--requests");
const REQUESTS = arg > 0 ? Number(process.argv[arg + 1]) : smoke ? 200 : 4000;

interface Scenario {
  name: string;
  path: string;
  body: Record<string, unknown>;
  concurrency: number;
}

const completion = {
  model: "bench",
  prompt: "The quick brown fox jumps over the lazy dog. ".repeat(20),
  max_tokens: 1,
};
const chatStream = {
  model: "bench",
  messages: [{ role: "user", content: "Tell me about routers." }],
  max_tokens: 16,
  ignore_eos: true,
  stream: true,
  stream_options: { include_usage: true },
};
const SCENARIOS: Scenario[] = [
  { name: "completion, 1 token, sequential", path: "/v1/completions", body: completion, concurrency: 1 },
  { name: "completion, 1 token, 32 concurrent", path: "/v1/completions", body: completion, concurrency: 32 },
  {
    name: "chat stream, 16 tokens, sequential",
    path: "/v1/chat/completions",
    body: chatStream,
    concurrency: 1,
  },
  {
    name: "chat stream, 16 tokens, 32 concurrent",
    path: "/v1/chat/completions",
    body: chatStream,
    concurrency: 32,
  },
];

async function run(pool: Pool, scenario: Scenario, count: number): Promise<Record<string, string | number>> {
  const payload = JSON.stringify(scenario.body);
  const latencies: number[] = [];
  let issued = 0;
  const worker = async () => {
    while (issued++ < count) {
      const t0 = performance.now();
      const res = await pool.request({ method: "POST", path: scenario.path, body: payload });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
      latencies.push(performance.now() - t0);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: scenario.concurrency }, worker));
  const seconds = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!.toFixed(3);
  return {
    scenario: scenario.name,
    requests: latencies.length,
    "p50 ms": pct(0.5),
    "p99 ms": pct(0.99),
    "req/s": Math.round(latencies.length / seconds),
  };
}

const parsed = parseSimConfig({
  model: "bench",
  port: 0,
  host: "127.0.0.1",
  seed: 1,
  mode: "random",
  "time-to-first-token": 0,
  "inter-token-latency": 0,
  speed: 1e6,
});
if (!parsed.ok) throw new Error(parsed.error);
const sim = await startSimServer(parsed.config);
const pool = new Pool(sim.url, { connections: 64, pipelining: 1 });
const rows = [];
for (const scenario of SCENARIOS) {
  await run(pool, scenario, Math.ceil(REQUESTS / 4)); // warm-up (JIT, connections)
  const cpu = process.cpuUsage();
  const row = await run(pool, scenario, REQUESTS);
  const used = process.cpuUsage(cpu);
  rows.push({
    ...row,
    "CPU µs/req (server+client)": Math.round((used.user + used.system) / Number(row.requests)),
  });
}
console.log(
  `llmd sim HTTP overhead (Node ${process.version}, ${REQUESTS} requests per row, client in-process)`,
);
console.table(rows);
await pool.close();
await sim.close();
