/**
 * `npm run bench -- upstream-client [--rounds 5] [--requests 5000] [--streams 64] [--tokens 100]`:
 * CPU of the router's two upstream clients alone, the HTTP/1.1 client (src/http1) against undici's
 * `Pool.dispatch` (what the forward path used before), against one `llmd sim` in its own process,
 * in interleaved rounds. (1) JSON: `--requests` completions of one token, 32 at once: µs of this
 * process's CPU per request. (2) Streams: `--streams` at once, `--tokens` each, 5 ms apart (one
 * token per read): µs per relayed token. Medians over the rounds.
 */
import type { ChildProcess } from "node:child_process";
import { Pool } from "undici";
import type { ResponseHandler } from "../src/http1/exchange.ts";
import { Http1Pool } from "../src/http1/pool.ts";
import { startListener } from "./router/targets.ts";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const ROUNDS = flag("rounds", 5);
const REQUESTS = flag("requests", 5000);
const STREAMS = flag("streams", 64);
const TOKENS = flag("tokens", 100);

type Client = Pool | Http1Pool;
let sent = 0;

/** One completion through `client`; resolves with the body pieces it took. */
function complete(client: Client, tokens: number): Promise<number> {
  const body = Buffer.from(
    JSON.stringify({
      model: "bench-model",
      prompt: `hi ${sent++}`,
      max_tokens: tokens,
      ignore_eos: true,
      stream: tokens > 1,
    }),
  );
  const request = {
    path: "/v1/completions",
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  };
  return new Promise((resolve, reject) => {
    let pieces = 0;
    const handler: ResponseHandler = {
      onRequestStart: () => {},
      onResponseStart: () => {},
      onResponseData: () => void pieces++,
      onResponseEnd: () => resolve(pieces),
      onResponseError: (_c, error) => reject(error),
    };
    if (client instanceof Http1Pool) client.dispatch(request, handler);
    else client.dispatch({ ...request, origin: undefined }, handler);
  });
}

/** CPU µs of this process per unit over `count` completions, `concurrency` at once. */
async function cpuPer(client: Client, count: number, concurrency: number, tokens: number): Promise<number> {
  const start = process.cpuUsage();
  let left = count;
  let units = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const pieces = await complete(client, tokens);
        units += tokens > 1 ? pieces : 1;
      }
    }),
  );
  const used = process.cpuUsage(start);
  return (used.user + used.system) / units;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const sim: { url: string; child: ChildProcess } = await startListener([
    "src/cli/main.ts",
    ...["sim", "--port", "0", "--host", "127.0.0.1", "--model", "bench-model"],
    ...["--time-to-first-token", "0ms", "--inter-token-latency", "5ms", "--max-num-seqs", "1024"],
  ]);
  const { hostname, port } = new URL(sim.url);
  const clients: Record<string, Client> = {
    "undici Pool.dispatch": new Pool(sim.url),
    "http1 (src/http1)": new Http1Pool(hostname, Number(port), {
      connectTimeoutMs: 2000,
      headersTimeoutMs: 60_000,
      bodyTimeoutMs: 60_000,
      keepAliveMs: 30_000,
    }),
  };
  const json: Record<string, number[]> = {};
  const streams: Record<string, number[]> = {};
  for (const client of Object.values(clients)) await cpuPer(client, REQUESTS / 5, 32, 1);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, client] of Object.entries(clients)) {
      (json[name] ??= []).push(await cpuPer(client, REQUESTS, 32, 1));
      (streams[name] ??= []).push(await cpuPer(client, STREAMS, STREAMS, TOKENS));
    }
  }
  console.log(`${ROUNDS} interleaved rounds, medians (client process CPU)`);
  console.table(
    Object.keys(clients).map((name) => ({
      client: name,
      "JSON µs/req": median(json[name] as number[]).toFixed(1),
      "stream µs/token": median(streams[name] as number[]).toFixed(2),
    })),
  );
  await (clients["undici Pool.dispatch"] as Pool).close();
  (clients["http1 (src/http1)"] as Http1Pool).close();
  sim.child.kill();
}

await main();
