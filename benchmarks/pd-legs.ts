/**
 * `npm run bench -- pd-legs [--seconds 5] [--warmup 2] [--concurrency 1,16] [--prompt-bytes 2000]`:
 * what running a request as two P/D legs costs on loopback, against serving it on one server.
 * Zero-latency simulators (engine time 10⁶× wall time, so only HTTP and protocol cost shows) behind
 * a router: aggregated (default config, one server), sidecar legs (llm-d's pd-epp-config.yaml,
 * router → llmd sidecar → prefill and decode simulators) and router-run legs (the same config,
 * `--pd-legs router`). Router, sidecar and simulators share this process; the load generator
 * (benchmarks/router/load.ts: unique completions prompts of `--prompt-bytes`, `max_tokens: 1`,
 * closed loop) runs in its own. Prints latency and throughput per setup and concurrency, and the
 * CPU time this process spent per request.
 */
import { fork } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ROLE_LABEL } from "../src/endpoints/endpoint.ts";
import { parseEndpointList } from "../src/endpoints/sources/static-source.ts";
import { type Router, startRouter } from "../src/gateway/router.ts";
import { type Sidecar, startSidecar } from "../src/gateway/sidecar.ts";
import { parseSimConfig } from "../src/sim/config.ts";
import { type SimServer, startSimServer } from "../src/sim/server.ts";
import type { LoadJob, LoadResult } from "./router/load.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    warmup: { type: "string", default: "2" },
    concurrency: { type: "string", default: "1,16" },
    "prompt-bytes": { type: "string", default: "2000" },
  },
});
const MODEL = "bench-model";
const LOAD_WORKER = fileURLToPath(new URL("./router/load.ts", import.meta.url));
const PD_CONFIG = { path: join(import.meta.dirname, "../../shared/data/llm-d-configs/pd-epp-config.yaml") };
const NIXL = { kv_connector: "NixlConnector", kv_role: "kv_both" };

async function sim(engineId: string): Promise<SimServer> {
  const parsed = parseSimConfig({
    model: MODEL,
    port: 0,
    host: "127.0.0.1",
    seed: 1,
    "time-to-first-token": 0,
    "inter-token-latency": 0,
    speed: 1e6,
    // The stand-in tokenizer (4 characters a token): the real one's cost would hide the protocol's.
    tokenizer: "char4",
    "kv-transfer-config": JSON.stringify({ ...NIXL, engine_id: engineId }),
  });
  if (!parsed.ok) throw new Error(parsed.error);
  return startSimServer(parsed.config);
}

const endpoint = (name: string, role: string, url: string) => {
  const [meta] = parseEndpointList(url);
  return { ...meta!, key: `default/${name}`, name, labels: { [ROLE_LABEL]: role } };
};

interface Setup {
  name: string;
  router: Router;
  sidecar?: Sidecar;
}

async function setups(prefill: SimServer, decode: SimServer): Promise<Setup[]> {
  const quiet = { port: 0, host: "127.0.0.1", log: () => {} };
  const retry = { maxRetries: 0, backoffMs: 200 };
  const sidecar = await startSidecar({ port: 0, modelServerPort: Number(new URL(decode.url).port), retry });
  const pd = (decodeUrl: string) => [
    endpoint("prefill", "prefill", prefill.url),
    endpoint("decode", "decode", decodeUrl),
  ];
  return [
    {
      name: "aggregated (one server)",
      router: await startRouter({ ...quiet, endpoints: parseEndpointList(decode.url) }),
    },
    {
      name: "sidecar legs",
      sidecar,
      router: await startRouter({
        ...quiet,
        config: PD_CONFIG,
        endpoints: pd(sidecar.urls[0]!),
        pd: { legs: "sidecar", retry },
      }),
    },
    {
      name: "router-run legs",
      router: await startRouter({
        ...quiet,
        config: PD_CONFIG,
        endpoints: pd(decode.url),
        pd: { legs: "router", retry },
      }),
    },
  ];
}

/** One closed-loop run in a fresh load-generator process (its LoadJob protocol). */
async function load(url: string, concurrency: number): Promise<LoadResult> {
  const worker = fork(LOAD_WORKER, [], { execArgv: ["--import", "tsx"], stdio: "inherit" });
  const result = new Promise<LoadResult>((resolve, reject) => {
    worker.on("message", (msg: { measuring?: boolean } | LoadResult) => {
      if (!("measuring" in msg)) resolve(msg as LoadResult);
    });
    worker.once("exit", (code) => reject(new Error(`load generator exited with ${code}`)));
  });
  const job: LoadJob = {
    url,
    model: MODEL,
    prompts: "unique",
    seconds: Number(values.seconds),
    warmupSeconds: Number(values.warmup),
    concurrency,
    promptBytes: Number(values["prompt-bytes"]),
  };
  worker.send(job);
  const r = await result;
  await once(worker, "exit").catch(() => {});
  return r;
}

const [prefill, decode] = await Promise.all([sim("prefill"), sim("decode")]);
const all = await setups(prefill, decode);
const rows: Record<string, string | number>[] = [];
for (const concurrency of String(values.concurrency).split(",").map(Number)) {
  for (const setup of all) {
    const cpu = process.cpuUsage();
    const r = await load(setup.router.url, concurrency);
    const used = process.cpuUsage(cpu);
    rows.push({
      setup: setup.name,
      concurrency,
      requests: r.requests,
      errors: r.errors,
      "p50 ms": r.p50.toFixed(2),
      "p99 ms": r.p99.toFixed(2),
      "req/s": Math.round(r.requests / r.seconds),
      // Warm-up requests included: an upper bound per measured request.
      "CPU µs/req (router+sidecar+sims)": Math.round((used.user + used.system) / Math.max(1, r.requests)),
    });
  }
}
console.log(
  `P/D legs on loopback (Node ${process.version}, ${values["prompt-bytes"]}-byte prompts, max_tokens 1, ${values.seconds} s per row)`,
);
console.table(rows);
for (const setup of all) {
  await setup.router.close();
  await setup.sidecar?.close();
}
await Promise.all([prefill.close(), decode.close()]);
