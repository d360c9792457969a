/**
 * `npm run bench -- router [--seconds 5] [--warmup 2] [--rates 100,500,1000] [--concurrency 32]
 * [--nice=0] [--prompts unique|same] [--rounds 1] [--cases latency,throughput,large,streams]
 * [--prompt-kb 800] [--large-rate 5] [--streams 128] [--stream-tokens 200] [--split-tokens 20]`: what the router adds
 * per request and per streamed token. Two zero-latency simulators (so only proxy cost shows) are
 * reached directly, through `llmd router` (default config), through a bare Node.js proxy (the
 * floor any Node proxy pays), through nginx (one process, round-robin, when installed) and through a
 * TCP pipe in Node (benchmarks/router/net-pipe.ts: no HTTP, the socket layer's own cost). The
 * load generator is a separate process (benchmarks/router/load.ts). `--nice=-10` runs every measured
 * process and the load generator at that OS priority, damping other jobs on a shared machine.
 * Prompts are short (`hi <n>`) and unique by default; with `--prompts same` every request is `hi`,
 * and the router's prefix affinity (rightly) pins them all to one simulator. `--rounds N` repeats
 * every measurement N times with the targets interleaved and prints medians.
 * Prints (a) latency at fixed open-loop rates, (b) closed-loop throughput, (c) latency of large
 * prompts, each with the server process's CPU time per request (from /proc: robust when the
 * machine is shared), (d) CPU time per relayed SSE event over many concurrent streams (and, from a
 * second run at `--split-tokens` tokens a stream, that CPU split into a part per stream and a part
 * per token; 0 skips it), and the targets as measured in this run. `--baseline <dir>` adds the `llmd router` of another
 * source tree (an earlier commit, e.g. `git archive <commit> | tar -x -C <dir>` with
 * node_modules linked) as a last target, measured in the same rounds: a before/after in one run.
 * `--router-node-flags "<flags>"` adds this tree's `llmd router` started with those Node.js flags
 * (e.g. `--single-threaded-gc`) as a target of its own, the same before/after for a runtime flag.
 * Before any case, every target serves `--jit-warmup` seconds of closed-loop load, untimed: V8
 * compiles a process's hot code over its first tens of thousands of requests (on 4 background
 * threads, counted in its CPU), and a router with many plugins takes longer to get there than
 * the bare proxy, so an unwarmed first case would charge its warm-up to the router.
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { loadavg, setPriority } from "node:os";
import { parseArgs } from "node:util";
import type { LoadJob, LoadResult } from "./router/load.ts";
import { loadWindow } from "./router/load-window.ts";
import {
  BENCH_MODEL,
  cpuSeconds,
  nginxVersion,
  startNetPipe,
  startNginx,
  startNodeFloor,
  startRouterProcess,
  startZeroLatencySims,
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
    cases: { type: "string", default: "latency,throughput,large,streams" },
    "prompt-kb": { type: "string", default: "800" },
    "large-rate": { type: "string", default: "5" },
    streams: { type: "string", default: "128" },
    "stream-tokens": { type: "string", default: "200" },
    "split-tokens": { type: "string", default: "20" },
    baseline: { type: "string" },
    "router-node-flags": { type: "string" },
    "jit-warmup": { type: "string", default: "15" },
  },
});
const CASES = new Set(String(values.cases).split(","));
/** OS priority of every measured process and of the load generator (negative needs root). */
const NICE = Number(values.nice);
const PROMPTS = values.prompts === "same" ? "same" : "unique";
/** Each measurement is repeated this many times, targets interleaved; rows show medians. */
const ROUNDS = Math.max(1, Number(values.rounds));

/** Runs one job in a fresh load-generator process; CPU of `target` is read around the window. */
type Measured = LoadResult & {
  cpuUs: number;
  cpuUsPerEvent: number;
  /** The kernel's share of `cpuUsPerEvent` (system time: syscalls, the loopback TCP stack). */
  sysUsPerEvent: number;
};
type Job = Omit<LoadJob, "url" | "model" | "prompts">;

async function measure(target: Target, job: Job): Promise<Measured> {
  const { result: r, cpu } = await loadWindow(
    target,
    { ...job, url: target.url, model: BENCH_MODEL, prompts: PROMPTS },
    { onFork: prioritise },
  );
  const cpuUsTotal = (cpu.user + cpu.system) * 1e6;
  return {
    ...r,
    cpuUs: cpuUsTotal / Math.max(1, r.requests + r.errors),
    cpuUsPerEvent: cpuUsTotal / Math.max(1, r.events),
    sysUsPerEvent: (cpu.system * 1e6) / Math.max(1, r.events),
  };
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
    events: sum((r) => r.events),
    cpuUs: med((r) => r.cpuUs),
    cpuUsPerEvent: med((r) => r.cpuUsPerEvent),
    sysUsPerEvent: med((r) => r.sysUsPerEvent),
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
  const sims = await startZeroLatencySims();
  const router = await startRouterProcess(sims.urls);
  const floor = await startNodeFloor(sims.urls);
  const nginx = await startNginx(sims.urls);
  const pipe = await startNetPipe(sims.urls);
  const targets: Target[] = [
    { name: "direct (one sim)", url: sims.urls[0] as string, pid: sims.children[0]?.pid ?? 0 },
    { name: "llmd router", url: router.url, pid: router.child.pid ?? 0 },
    { name: "node floor (bare proxy)", url: floor.url, pid: floor.child.pid ?? 0 },
  ];
  if (nginx) targets.push({ name: "nginx (1 process)", url: nginx.url, pid: nginx.child.pid ?? 0 });
  else console.log("nginx not installed (apt-get install -y nginx): its rows are skipped");
  targets.push({ name: "node net pipe (TCP, no HTTP)", url: pipe.url, pid: pipe.child.pid ?? 0 });
  const baseline = values.baseline ? await startRouterProcess(sims.urls, values.baseline) : undefined;
  if (baseline)
    targets.push({ name: "llmd router (baseline)", url: baseline.url, pid: baseline.child.pid ?? 0 });
  const nodeFlags = values["router-node-flags"]?.split(" ").filter((flag) => flag !== "");
  const flagged = nodeFlags ? await startRouterProcess(sims.urls, undefined, { nodeFlags }) : undefined;
  if (flagged)
    targets.push({
      name: `llmd router (${nodeFlags!.join(" ")})`,
      url: flagged.url,
      pid: flagged.child.pid ?? 0,
    });
  const children = [
    router.child,
    floor.child,
    ...(nginx ? [nginx.child] : []),
    pipe.child,
    ...(baseline ? [baseline.child] : []),
    ...(flagged ? [flagged.child] : []),
  ];
  for (const child of [...sims.children, ...children]) prioritise(child.pid);
  return { targets, children, stopSims: () => sims.stop() };
}

/** The open-loop results per rate. */
async function latencyTable(targets: Target[], seconds: number, warmup: number): Promise<Measured[][]> {
  const rows: Record<string, string | number>[] = [];
  const byRate: Measured[][] = [];
  for (const rate of String(values.rates).split(",").map(Number)) {
    const results = await measureAll(targets, { rate, seconds, warmupSeconds: warmup });
    byRate.push(results);
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
  return byRate;
}

async function throughputTable(targets: Target[], seconds: number, warmup: number): Promise<Measured[]> {
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
  return results;
}

/** Results indexed like the targets: direct, router, floor, then nginx (when installed), the net pipe, the baseline and the flagged router. */
interface CaseResults {
  latency?: Measured[][];
  throughput?: Measured[];
  large?: Measured[];
  streams?: Measured[];
  /** The streams' CPU per stream and per token (`--split-tokens`), indexed like the targets. */
  streamSplit?: StreamSplit[];
}

/** The targets, each as measured against its bound in this run. */
function targetsTable(targets: readonly Target[], results: CaseResults): void {
  const nginxAt = targets.findIndex((t) => t.name.startsWith("nginx"));
  const rows: { target: string; measured: string; bound: string; met: string }[] = [];
  const add = (target: string, value: number, bound: number, unit: string, detail: string) =>
    rows.push({
      target,
      measured: `${value.toFixed(2)}${unit} (${detail})`,
      bound: `≤ ${bound}${unit}`,
      met: Number.isFinite(value)
        ? value <= bound
          ? "yes"
          : `no, by ${(value - bound).toFixed(2)}${unit}`
        : "n/a",
    });
  const rates = String(values.rates).split(",").map(Number);
  const at1000 = results.latency?.[rates.indexOf(1000)];
  const nginxAt1000 = at1000?.[nginxAt];
  if (at1000 && nginxAt1000) {
    const [direct, router] = at1000 as [Measured, Measured];
    const nginx = nginxAt1000;
    const gap = router.p50 - direct.p50 - (nginx.p50 - direct.p50);
    add(
      "router +p50 over nginx's @1000 req/s",
      gap,
      0.5,
      " ms",
      `router +${ms(router.p50 - direct.p50)}, nginx +${ms(nginx.p50 - direct.p50)}`,
    );
  }
  const closed = results.throughput;
  if (closed?.[2]) {
    const [, router, floor] = closed as [Measured, Measured, Measured];
    add(
      "CPU/req, router ÷ node floor (closed loop)",
      router.cpuUs / floor.cpuUs,
      1.5,
      "×",
      `${Math.round(router.cpuUs)} vs ${Math.round(floor.cpuUs)} µs`,
    );
  }
  const large = results.large;
  if (large?.[1]) {
    const [direct, router] = large as [Measured, Measured];
    add(
      `${values["prompt-kb"]} KB prompt, router +p50 over direct`,
      router.p50 - direct.p50,
      3,
      " ms",
      `${ms(router.p50)} vs ${ms(direct.p50)} ms`,
    );
  }
  const streams = results.streams;
  const nginxStreams = streams?.[nginxAt];
  if (streams && nginxStreams) {
    const [, router, floor] = streams as [Measured, Measured, Measured];
    const nginx = nginxStreams;
    const pipe = streams[targets.findIndex((t) => t.name.startsWith("node net pipe"))];
    const pipeNote = pipe ? `, net pipe ${pipe.cpuUsPerEvent.toFixed(1)}` : "";
    const split = results.streamSplit;
    const splitNote = split
      ? `; per token past the streams' own: ${split[1]?.perToken.toFixed(1)} vs ${split[nginxAt]?.perToken.toFixed(1)}`
      : "";
    add(
      "CPU/relayed token, router ÷ nginx",
      router.cpuUsPerEvent / nginx.cpuUsPerEvent,
      2,
      "×",
      `${router.cpuUsPerEvent.toFixed(1)} vs ${nginx.cpuUsPerEvent.toFixed(1)} µs; floor ${floor.cpuUsPerEvent.toFixed(1)}${pipeNote}${splitNote}`,
    );
  }
  console.log("\nagainst the targets (this run; ratios measured side by side)");
  console.table(rows);
}

/** Open loop at `--large-rate` with prompts padded to `--prompt-kb`. */
async function largePromptTable(targets: Target[], seconds: number, warmup: number): Promise<Measured[]> {
  const rate = Number(values["large-rate"]);
  const promptBytes = Number(values["prompt-kb"]) * 1024;
  const results = await measureAll(targets, { rate, seconds, warmupSeconds: warmup, promptBytes });
  const directP50 = results[0]?.p50 ?? Number.NaN;
  const rows = results.map((r, i) => ({
    target: targets[i]?.name ?? "",
    "req/s": rate,
    ok: r.requests,
    errors: r.errors,
    "p50 ms": ms(r.p50),
    "p99 ms": ms(r.p99),
    "+p50 vs direct": ms(r.p50 - directP50),
    "server CPU µs/req": Math.round(r.cpuUs),
  }));
  console.log(
    `\n(c) ${values["prompt-kb"]} KB prompts, open loop at ${rate} req/s, ${seconds} s after ${warmup} s warm-up, ${roundsNote()}`,
  );
  console.table(rows);
  return results;
}

/**
 * CPU ms per second each target spends with nothing to serve (the router's metric scrapes), all
 * measured over the same `seconds`.
 */
async function idleCpuMsPerSecond(targets: readonly Target[], seconds: number): Promise<number[]> {
  const start = targets.map((t) => cpuSeconds(t.pid));
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  return targets.map((t, i) => ((cpuSeconds(t.pid) - (start[i] ?? 0)) * 1000) / seconds);
}

/** A target's streaming CPU as a part per stream (request, head, end) and a part per relayed token. */
interface StreamSplit {
  perStream: number;
  perToken: number;
}

/**
 * Splits CPU per event from two stream lengths: each run's is `perToken + perStream × streams per
 * event`, two lines in two unknowns. Every event a window counts belongs to a stream it counts
 * (the load generator's window ends when its streams do), so streams per event is exact.
 */
function splitStreams(long: Measured, short: Measured): StreamSplit {
  const streamsPerEvent = (r: Measured) => (r.requests + r.errors) / Math.max(1, r.events);
  const perStream =
    (short.cpuUsPerEvent - long.cpuUsPerEvent) / (streamsPerEvent(short) - streamsPerEvent(long));
  return { perStream, perToken: long.cpuUsPerEvent - perStream * streamsPerEvent(long) };
}

/** `--streams` concurrent streams of `--stream-tokens` tokens, back to back: CPU per relayed event. */
async function streamsTable(
  targets: Target[],
  seconds: number,
  warmup: number,
): Promise<{ results: Measured[]; split: StreamSplit[] | undefined }> {
  const concurrency = Number(values.streams);
  const streamTokens = Number(values["stream-tokens"]);
  const splitTokens = Number(values["split-tokens"]);
  const job = { concurrency, seconds, warmupSeconds: warmup };
  const results = await measureAll(targets, { ...job, streamTokens });
  const short =
    splitTokens > 0 ? await measureAll(targets, { ...job, streamTokens: splitTokens }) : undefined;
  const split = short && results.map((r, i) => splitStreams(r, short[i] as Measured));
  // After the load, so the code is warm (freshly started, the scrapes run in V8's baseline tiers).
  const idle = await idleCpuMsPerSecond(targets, 3);
  const rows = results.map((r, i) => {
    const eventsPerSecond = r.events / r.seconds;
    const idleUsPerEvent = ((idle[i] ?? 0) * 1000) / eventsPerSecond;
    return {
      target: targets[i]?.name ?? "",
      streams: concurrency,
      completed: r.requests,
      errors: r.errors,
      "events/s": Math.round(eventsPerSecond),
      "server CPU µs/event": r.cpuUsPerEvent.toFixed(1),
      "of it kernel": r.sysUsPerEvent.toFixed(1),
      "idle CPU ms/s": (idle[i] ?? 0).toFixed(0),
      "µs/event above idle": (r.cpuUsPerEvent - idleUsPerEvent).toFixed(1),
      ...(split && {
        "µs/stream": Math.round(split[i]?.perStream ?? Number.NaN),
        "µs/token past it": split[i]?.perToken.toFixed(1),
      }),
    };
  });
  const splitNote = split ? `; split by a second run of ${splitTokens}-token streams` : "";
  console.log(
    `\n(d) ${concurrency} concurrent streams of ${streamTokens} tokens (one SSE event each, 20 ms apart), ${seconds} s, ${roundsNote()}${splitNote}`,
  );
  console.table(rows);
  return { results, split };
}

/** `--jit-warmup` seconds of closed-loop load on every target, untimed (see the module comment). */
async function warmUp(targets: readonly Target[]): Promise<void> {
  const seconds = Number(values["jit-warmup"]);
  if (!(seconds > 0)) return;
  const concurrency = Number(values.concurrency);
  for (const target of targets) await measure(target, { concurrency, seconds, warmupSeconds: 0 });
  console.log(`JIT warm-up: ${seconds} s of closed loop (${concurrency}) on every target, untimed`);
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
  await warmUp(targets);
  const results: CaseResults = {};
  if (CASES.has("latency")) results.latency = await latencyTable(targets, seconds, warmup);
  if (CASES.has("throughput")) results.throughput = await throughputTable(targets, seconds, warmup);
  if (CASES.has("large")) results.large = await largePromptTable(targets, seconds, warmup);
  if (CASES.has("streams")) {
    const { results: streams, split } = await streamsTable(targets, seconds, warmup);
    results.streams = streams;
    if (split) results.streamSplit = split;
  }
  targetsTable(targets, results);
} finally {
  console.log(`\nload average at end: ${load()}`);
  for (const child of children) child.kill("SIGTERM");
  await Promise.all(children.map((c) => (c.exitCode === null ? once(c, "exit") : undefined)));
  await stopSims();
}
