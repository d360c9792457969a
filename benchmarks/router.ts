/**
 * `npm run bench -- router [--seconds 5] [--warmup 2] [--rates 100,500,1000] [--concurrency 32]
 * [--nice=0] [--prompts unique|same] [--rounds 1]`: what the router adds per request. Two zero-latency simulators (so only proxy cost shows) are
 * reached directly, through `llmd router` (default config), through a bare Node.js proxy (the
 * floor any Node proxy pays) and through nginx (one process, round-robin, when installed). The
 * load generator is a separate process (benchmarks/router/load.ts). `--nice=-10` runs every measured
 * process and the load generator at that OS priority, damping other jobs on a shared machine.
 * Prompts are short (`hi <n>`) and unique by default; with `--prompts same` every request is `hi`,
 * and the router's prefix affinity (rightly) pins them all to one simulator. `--rounds N` repeats
 * every measurement N times with the targets interleaved and prints medians.
 * Prints (a) latency at fixed open-loop rates, (b) closed-loop throughput, each with the server
 * process's CPU time per request (from /proc: robust when the machine is shared).
 */
import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { loadavg, setPriority } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startSimReplicas } from "../src/cli/sim-replicas.ts";
import type { LoadJob, LoadResult } from "./router/load.ts";
import {
  cpuSeconds,
  nginxVersion,
  startNginx,
  startNodeFloor,
  startRouterProcess,
  type Target,
} from "./router/targets.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    warmup: { type: "string", default: "2" },
    rates: { type: "string", default: "100,500,1000" },
    concurrency: { type: "string", default: "32" },
    nice: { type: "string", default: "0" },
    prompts: { type: "string", default: "unique" },
    rounds: { type: "string", default: "1" },
  },
});
/** OS priority of every measured process and of the load generator (negative needs root). */
const NICE = Number(values.nice);
const MODEL = "bench-model";
const PROMPTS = values.prompts === "same" ? "same" : "unique";
/** Each measurement is repeated this many times, targets interleaved; rows show medians. */
const ROUNDS = Math.max(1, Number(values.rounds));
const LOAD_WORKER = fileURLToPath(new URL("./router/load.ts", import.meta.url));

/** Runs one job in a fresh load-generator process; CPU of `target` is read around the window. */
type Measured = LoadResult & { cpuUs: number };
type Job = Omit<LoadJob, "url" | "model" | "prompts">;

async function measure(target: Target, job: Job): Promise<Measured> {
  const worker = fork(LOAD_WORKER, [], { execArgv: ["--import", "tsx"], stdio: "inherit" });
  prioritise(worker.pid);
  let cpuAtStart = Number.NaN;
  const result = new Promise<LoadResult>((resolve, reject) => {
    worker.on("message", (msg: { measuring?: boolean } | LoadResult) => {
      if ("measuring" in msg) cpuAtStart = cpuSeconds(target.pid);
      else resolve(msg as LoadResult);
    });
    worker.once("exit", (code) => reject(new Error(`load generator exited with ${code}`)));
  });
  worker.send({ ...job, url: target.url, model: MODEL, prompts: PROMPTS } satisfies LoadJob);
  const r = await result;
  const cpuUs = ((cpuSeconds(target.pid) - cpuAtStart) * 1e6) / Math.max(1, r.requests + r.errors);
  await once(worker, "exit").catch(() => {});
  return { ...r, cpuUs };
}

function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : (sorted[(sorted.length - 1) >> 1] as number);
}

/** Medians of the statistics over rounds; counts and durations summed. */
function combine(runs: Measured[]): Measured {
  const med = (pick: (r: Measured) => number) => median(runs.map(pick));
  const sum = (pick: (r: Measured) => number) => runs.reduce((acc, r) => acc + pick(r), 0);
  return {
    requests: sum((r) => r.requests),
    errors: sum((r) => r.errors),
    seconds: sum((r) => r.seconds),
    p50: med((r) => r.p50),
    p90: med((r) => r.p90),
    p99: med((r) => r.p99),
    p999: med((r) => r.p999),
    max: Math.max(...runs.map((r) => r.max)),
    cpuUs: med((r) => r.cpuUs),
  };
}

/** `job` on every target, ROUNDS times with targets interleaved, so a busy spell hits all alike. */
async function measureAll(targets: readonly Target[], job: Job): Promise<Measured[]> {
  const runs: Measured[][] = targets.map(() => []);
  for (let round = 0; round < ROUNDS; round++)
    for (const [i, target] of targets.entries()) runs[i]?.push(await measure(target, job));
  return runs.map(combine);
}

const ms = (v: number | null) => (typeof v === "number" && Number.isFinite(v) ? v.toFixed(2) : "n/a");

function prioritise(pid: number | undefined): void {
  if (NICE !== 0 && pid !== undefined) setPriority(pid, NICE);
}
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

async function startTargets(): Promise<{
  targets: Target[];
  children: ChildProcess[];
  stopSims: () => Promise<void>;
}> {
  const flags = ["--model", MODEL, "--time-to-first-token", "0ms", "--inter-token-latency", "0ms"];
  const sims = await startSimReplicas({
    replicas: 2,
    basePort: 0,
    stdio: "ignore",
    simArgs: [...flags, "--host", "127.0.0.1"],
  });
  const router = await startRouterProcess(sims.urls);
  const floor = await startNodeFloor(sims.urls);
  const nginx = await startNginx(sims.urls);
  const targets: Target[] = [
    { name: "direct (one sim)", url: sims.urls[0] as string, pid: sims.children[0]?.pid ?? 0 },
    { name: "llmd router", url: router.url, pid: router.child.pid ?? 0 },
    { name: "node floor (bare proxy)", url: floor.url, pid: floor.child.pid ?? 0 },
  ];
  if (nginx) targets.push({ name: "nginx (1 process)", url: nginx.url, pid: nginx.child.pid ?? 0 });
  else console.log("nginx not installed (apt-get install -y nginx): its rows are skipped");
  const children = [router.child, floor.child, ...(nginx ? [nginx.child] : [])];
  for (const child of [...sims.children, ...children]) prioritise(child.pid);
  return { targets, children, stopSims: () => sims.stop() };
}

async function latencyTable(targets: Target[], seconds: number, warmup: number): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  for (const rate of String(values.rates).split(",").map(Number)) {
    const results = await measureAll(targets, { rate, seconds, warmupSeconds: warmup });
    const directP50 = results[0]?.p50 ?? Number.NaN;
    for (const [i, r] of results.entries()) {
      rows.push({
        target: targets[i]?.name ?? "",
        "req/s": rate,
        ok: r.requests,
        errors: r.errors,
        "p50 ms": ms(r.p50),
        "p90 ms": ms(r.p90),
        "p99 ms": ms(r.p99),
        "p99.9 ms": ms(r.p999),
        "+p50 vs direct": ms(r.p50 - directP50),
        "server CPU µs/req": Math.round(r.cpuUs),
      });
    }
  }
  console.log(`\n(a) open loop at fixed rates, ${seconds} s each after ${warmup} s warm-up, ${roundsNote()}`);
  console.table(rows);
}

async function throughputTable(targets: Target[], seconds: number, warmup: number): Promise<void> {
  const concurrency = Number(values.concurrency);
  const results = await measureAll(targets, { concurrency, seconds, warmupSeconds: warmup });
  const rows = results.map((r, i) => ({
    target: targets[i]?.name ?? "",
    concurrency,
    "req/s": Math.round(r.requests / r.seconds),
    "p50 ms": ms(r.p50),
    "p99 ms": ms(r.p99),
    "server CPU µs/req": Math.round(r.cpuUs),
  }));
  console.log(
    `\n(b) closed loop, ${concurrency} concurrent, short prompts (${PROMPTS}), ${seconds} s, ${roundsNote()}`,
  );
  console.table(rows);
}

const roundsNote = () =>
  ROUNDS === 1 ? "1 round" : `${ROUNDS} interleaved rounds (medians; ok and req/s over all rounds)`;

const seconds = Number(values.seconds);
const warmup = Number(values.warmup);
console.log(
  `node ${process.version}, nginx ${nginxVersion()}, nice ${NICE}, prompts ${PROMPTS}, load average at start: ${load()}`,
);
const { targets, children, stopSims } = await startTargets();
try {
  await latencyTable(targets, seconds, warmup);
  await throughputTable(targets, seconds, warmup);
} finally {
  console.log(`\nload average at end: ${load()}`);
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(children.map((c) => (c.exitCode === null ? once(c, "exit") : undefined)));
  await stopSims();
}
