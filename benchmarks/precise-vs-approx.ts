/**
 * Precise against approximate prefix routing in the fleet simulator (issue #16): the default
 * routing (examples/configs/default.yaml, the approximate index of what the router sent where)
 * against the same routing over the engines' KV events (examples/configs/precise.yaml), on the
 * Claude Code sessions (Weka) and Mooncake, below and above the fleet's KV capacity, with and
 * without a CPU offload tier per replica. Prints captured reuse, TTFT p50/p99 over the completed
 * requests, the measured requests still without a first token at the cut (unfinished), the TTFT
 * p99 that counts those as waiting until the cut, and for the precise runs how stale the router's
 * view is (engine eviction → index knows it, p50/p99). Beside them, the floor: the TTFT p99 the
 * same requests would get each alone on an idle replica with the ideal cache's hit, which no
 * routing goes below. Each TTFT p99 ratio comes with a 95% bootstrap interval: of the completed
 * requests, each run resampled on its own; counting the unfinished, paired over the requests both
 * runs measured (a resample draws requests, so what the two runs share cancels). Each group of
 * cells is also compared over all its cells' requests pooled, which one unlucky collision moves
 * less than a single cell.
 *
 *   npm run bench -- precise-vs-approx [--traces weka,mooncake] [--weka-loads 32,192]
 *     [--mooncake-scales 1,4] [--mooncake-windows 0] [--mooncake-jitter-ms 0] [--offload-gb 0,200] [--routers 1] [--folds 1,2] [--seeds 1]
 *     [--policies approx=examples/configs/default.yaml,precise=examples/configs/precise.yaml]
 *     [--set key=value …] [--json out.json] [--records dir]
 *
 * `--policies` names configs as name=path; every policy after the first is compared with the first,
 * cell by cell, and by its worst cell over folds and seeds. Weka runs one fold of a 3-fold split
 * per cell (fold 0 is the tuning fold: choose parameters there, report the others) under each of
 * `--seeds` (the seed draws replacement sessions and breaks ties, and at 192 sessions moves the
 * TTFT p99 several times over on its own); Mooncake has no sessions to fold, so its cells are
 * windows of its hour of arrivals under each seed: window w replays the trace from
 * w × 300 s × the time scale, so at each scale the windows are disjoint (window 0, the trace's
 * start, for tuning). The trace's 3,537 s hold windows 0–11 at 1× and 0–2 at 4× (window 2 ends
 * 63 s of trace early); at 8× window 1 holds 142 replayed seconds, and a window that starts past
 * the end stops the bench before the first run. The trace is fixed, so a seed only breaks random
 * ties and most seeds give the same run; `--mooncake-jitter-ms 1` delays each arrival by up to
 * 1 ms, drawn from the seed, which leaves the load as it is and makes each seed a run of its own.
 * Defaults: 300
 * simulated seconds per run (Weka 60 s warm-up, Mooncake 100 s) on 16 h200-llama3-8b replicas; a
 * CPU tier of 200 GB adds about 1.5 M tokens per replica. `--routers 1,2` adds cells behind two
 * router replicas (active-active, each with its own scheduler state; every replica's precise
 * index gets every engine's events, while each approximate index sees only the requests its
 * replica routed). `--records dir` writes every run's per-request records (one JSON file per run,
 * `<policy>-<trace>-l<load>-cpu<GB>[-r<routers>]-<fold/seed>.json`) for `npm run bench -- records`.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createTimingModel } from "../src/engine/timing.ts";
import { IdleTtft } from "../src/engine/idle-ttft.ts";
import { resolveEngineOptions } from "../src/engine/options.ts";
import { runScenario, scenarioEngineOptions } from "../src/fleet/run-scenario.ts";
import {
  type Interval,
  pairedPercentileRatioInterval,
  percentileRatioInterval,
} from "../src/measure/bootstrap.ts";
import { percentile } from "../src/measure/percentile.ts";
import { completedTtftsMs, waitingTail } from "../src/measure/waiting-tail.ts";
import { createWorkload } from "../src/workload/index.ts";
import { loadScenario, type Scenario } from "../src/workload/scenario.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    traces: { type: "string", default: "weka,mooncake" },
    "weka-loads": { type: "string", default: "32,192" },
    "mooncake-scales": { type: "string", default: "1,4" },
    "mooncake-windows": { type: "string", default: "0" },
    "mooncake-jitter-ms": { type: "string", default: "0" },
    "offload-gb": { type: "string", default: "0,200" },
    routers: { type: "string", default: "1" },
    folds: { type: "string", default: "1,2" },
    seeds: { type: "string", default: "1" },
    policies: {
      type: "string",
      default: "approx=examples/configs/default.yaml,precise=examples/configs/precise.yaml",
    },
    set: { type: "string", multiple: true, default: [] },
    json: { type: "string" },
    records: { type: "string" },
  },
});

const list = (s: string) => s.split(",").filter(Boolean);
const numbers = (s: string) => list(s).map(Number);
const policies = list(values.policies).map((p) => {
  const [name, file] = p.split("=");
  const path = file ? resolve(root, file) : "";
  if (!name || !existsSync(path)) {
    console.error(`--policies ${p}: a policy is name=path of an EndpointPickerConfig file that exists`);
    process.exit(2);
  }
  return { name, path };
});

/** One measured cell: a trace at a load, an offload size, a fold or seed. */
interface Cell {
  trace: "weka" | "mooncake";
  /** Weka sessions or Mooncake time scale. */
  load: number;
  offloadGb: number;
  /** Router replicas, each with its own scheduler state. */
  routers: number;
  /** Weka fold, or the Mooncake window. */
  sample: number;
  seed: number;
}

/** One policy's result in one cell. */
interface Row extends Cell {
  policy: string;
  captured: number;
  ttftP50Ms: number;
  ttftP99Ms: number;
  completed: number;
  /** Measured requests with no first token when the run was cut (left out of the TTFT percentiles). */
  unfinished: number;
  /** TTFT p99 with the unfinished requests counted as waiting until the cut (a lower bound). */
  waitingP99Ms: number;
  /** TTFT p99 of the measured requests each alone on an idle replica with the ideal cache's hit. */
  idleP99Ms: number;
  /** Completed requests per second that met the scenario's SLO. */
  goodputRps: number;
  stalenessP50Ms: number;
  stalenessP99Ms: number;
  wallS: number;
}

/** A run's TTFTs (ms): of its completed requests, and of every measured one by id, counting the unfinished. */
interface Waits {
  completed: Float64Array;
  byRequest: Map<string, number>;
}

/** The {@link Waits} of each row, kept beside the rows so `--json` stays a table. */
const waitsOf = new Map<Row, Waits>();

function cells(): Cell[] {
  const out: Cell[] = [];
  for (const routers of numbers(values.routers))
    for (const offloadGb of numbers(values["offload-gb"]))
      for (const trace of list(values.traces)) {
        if (trace === "weka")
          for (const load of numbers(values["weka-loads"]))
            for (const sample of numbers(values.folds))
              for (const seed of numbers(values.seeds))
                out.push({ trace, load, offloadGb, routers, sample, seed });
        else if (trace === "mooncake")
          for (const load of numbers(values["mooncake-scales"]))
            for (const sample of numbers(values["mooncake-windows"]))
              for (const seed of numbers(values.seeds))
                out.push({ trace, load, offloadGb, routers, sample, seed });
        else throw new Error(`unknown trace ${trace} (weka, mooncake)`);
      }
  return out;
}

/** Simulated seconds of every run. */
const RUN_S = 300;

/** The scenario overrides of one cell under one policy. */
function overrides(cell: Cell, policyPath: string): string[] {
  const common = [
    `durationS=${RUN_S}`,
    `router.config=${policyPath}`,
    `fleet.engine.cpuOffloadGb=${cell.offloadGb}`,
    `routers=${cell.routers}`,
  ];
  if (cell.trace === "weka")
    return [
      ...common,
      "warmupS=60",
      `workload.sessions=${cell.load}`,
      `workload.fold={k: 3, include: [${cell.sample}]}`,
      `seed=${cell.seed}`,
      ...values.set,
    ];
  return [
    ...common,
    "warmupS=100",
    "drainS=120",
    `workload.timeScale=${cell.load}`,
    `workload.startS=${cell.sample * RUN_S * cell.load}`,
    `workload.jitterMs=${values["mooncake-jitter-ms"]}`,
    `seed=${cell.seed}`,
    ...values.set,
  ];
}

const scenarioFile = (trace: Cell["trace"]) =>
  join(root, "examples/scenarios", trace === "weka" ? "weka-16.yaml" : "mooncake-16.yaml");

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
const secs = (ms: number) => (Number.isNaN(ms) ? "–" : `${(ms / 1000).toFixed(2)} s`);
const millis = (ms: number) => (Number.isNaN(ms) ? "–" : `${ms.toFixed(0)} ms`);

/** Fails before the first run when a Mooncake window starts past the trace's end. */
function checkWindows(grid: readonly Cell[]): void {
  const checked = new Set<string>();
  for (const cell of grid) {
    const key = `${cell.load}/${cell.sample}`;
    if (cell.trace !== "mooncake" || checked.has(key)) continue;
    checked.add(key);
    const scenario = loadScenario(scenarioFile(cell.trace), overrides(cell, policies[0]!.path));
    createWorkload(scenario.workload, { seed: cell.seed, durationMs: RUN_S * 1000 });
  }
}

const grid = cells();
checkWindows(grid);
const total = grid.length * policies.length;
console.log(`${total} runs: ${grid.length} cells × policies ${policies.map((p) => p.name).join(", ")}`);
const rows: Row[] = [];
const started = Date.now();
for (const cell of grid)
  for (const policy of policies) {
    const scenario = loadScenario(scenarioFile(cell.trace), overrides(cell, policy.path));
    const run = await runScenario(scenario, (ms) =>
      process.stderr.write(`\r  ${label(cell)} ${policy.name}: ${(ms / 1000).toFixed(0)} simulated s `),
    );
    process.stderr.write("\n");
    if (values.records) writeRecords(values.records, cell, policy.name, run.result.records);
    const s = run.summary;
    const kv = run.result.kvEvents;
    const fromMs = scenario.warmupS * 1000;
    const toMs = scenario.durationS * 1000;
    const tail = waitingTail(run.result.records, fromMs, toMs, (scenario.durationS + scenario.drainS) * 1000);
    const waits: Waits = {
      completed: completedTtftsMs(tail.measured),
      byRequest: new Map(tail.measured.map((r, i) => [r.id, tail.waitsMs[i]!])),
    };
    const idle = idleTtftOf(scenario);
    const row: Row = {
      ...cell,
      policy: policy.name,
      captured: s.captured,
      ttftP50Ms: s.ttftMs.p50,
      ttftP99Ms: s.ttftMs.p99,
      completed: s.completed,
      unfinished: tail.unfinished,
      waitingP99Ms: tail.p99Ms,
      idleP99Ms: percentile(
        Float64Array.from(tail.measured, (r) => idle.ms(r.inputTokens, r.idealCachedTokens)),
        99,
      ),
      goodputRps: s.goodputRps,
      stalenessP50Ms: kv?.stalenessP50Ms ?? Number.NaN,
      stalenessP99Ms: kv?.stalenessP99Ms ?? Number.NaN,
      wallS: run.result.wallMs / 1000,
    };
    rows.push(row);
    waitsOf.set(row, waits);
    const elapsed = ((Date.now() - started) / 1000).toFixed(0);
    console.log(`[${rows.length}/${total}, ${elapsed} s] ${label(cell)} ${policy.name}: ${line(row)}`);
  }

/** Idle-engine TTFTs on the scenario's replicas. */
function idleTtftOf(scenario: Scenario): IdleTtft {
  const options = resolveEngineOptions(scenarioEngineOptions(scenario));
  return new IdleTtft(options, createTimingModel(options));
}

function writeRecords(dir: string, c: Cell, policy: string, records: unknown[]): void {
  mkdirSync(dir, { recursive: true });
  const sample = `${c.trace === "weka" ? "f" : "w"}${c.sample}-s${c.seed}`;
  const routers = c.routers > 1 ? `-r${c.routers}` : "";
  const file = join(dir, `${policy}-${c.trace}-l${c.load}-cpu${c.offloadGb}${routers}-${sample}.json`);
  writeFileSync(file, JSON.stringify(records));
}

function label(c: Cell): string {
  const load =
    c.trace === "weka"
      ? `${c.load} sessions fold ${c.sample} seed ${c.seed}`
      : `${c.load}x window ${c.sample} seed ${c.seed}`;
  const routers = c.routers > 1 ? ` ${c.routers} routers` : "";
  return `${c.trace} ${load} cpu ${c.offloadGb} GB${routers}`;
}

function line(r: Row): string {
  return (
    `captured ${pct(r.captured)} TTFT p50 ${secs(r.ttftP50Ms)} p99 ${secs(r.ttftP99Ms)} unfinished ${r.unfinished} ` +
    `p99 with unfinished ${secs(r.waitingP99Ms)} p99 alone ${secs(r.idleP99Ms)} goodput ${r.goodputRps.toFixed(2)} rps ` +
    `staleness p50 ${millis(r.stalenessP50Ms)} p99 ${millis(r.stalenessP99Ms)} (${r.wallS.toFixed(0)} s wall)`
  );
}

console.log("\nEvery run:\n");
console.log(
  "| trace | load | CPU GB | routers | fold or window/seed | policy | captured | TTFT p50 | TTFT p99 | unfinished | TTFT p99 with unfinished | TTFT p99 alone | goodput rps | staleness p50 | staleness p99 |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows)
  console.log(
    `| ${r.trace} | ${r.load} | ${r.offloadGb} | ${r.routers} | ${sampleOf(r)} | ${r.policy} | ${pct(r.captured)} | ${secs(r.ttftP50Ms)} | ${secs(r.ttftP99Ms)} | ${r.unfinished} | ${secs(r.waitingP99Ms)} | ${secs(r.idleP99Ms)} | ${r.goodputRps.toFixed(2)} | ${millis(r.stalenessP50Ms)} | ${millis(r.stalenessP99Ms)} |`,
  );

const [base, ...others] = policies;
for (const other of base ? others : []) {
  console.log(`\n${other.name} against ${base!.name}, per cell (Δ captured in points, TTFT ratios):\n`);
  console.log(
    "| trace | load | CPU GB | routers | fold or window/seed | Δ captured | TTFT p50 ratio | TTFT p99 ratio [95%] | with unfinished, paired [95%] |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const cell of grid) {
    const of = (name: string) => rows.find((r) => r.policy === name && sameCell(r, cell))!;
    const a = of(base!.name);
    const b = of(other.name);
    const delta = ((b.captured - a.captured) * 100).toFixed(1);
    const ratio = (x: number, y: number) => (x / y).toFixed(2);
    console.log(
      `| ${cell.trace} | ${cell.load} | ${cell.offloadGb} | ${cell.routers} | ${sampleOf(cell)} | ${delta} | ${ratio(b.ttftP50Ms, a.ttftP50Ms)} | ${completedRatio([{ a, b }])} | ${pairedRatio([{ a, b }])} |`,
    );
  }
}

function sameCell(a: Cell, b: Cell): boolean {
  return sameGroup(a, b) && a.sample === b.sample && a.seed === b.seed;
}

/** Same trace, load, CPU tier and routers: the cells whose folds and seeds a worst case is taken over. */
function sameGroup(a: Cell, b: Cell): boolean {
  return a.trace === b.trace && a.load === b.load && a.offloadGb === b.offloadGb && a.routers === b.routers;
}

/** One cell's two rows: the first policy's and the one compared with it. */
interface Pair {
  a: Row;
  b: Row;
}

/** p99 of the pairs' completed requests pooled, b over a, and its interval (each run resampled on its own). */
function completedRatio(pairs: Pair[]): string {
  const a = pooled(pairs.map((p) => waitsOf.get(p.a)!.completed));
  const b = pooled(pairs.map((p) => waitsOf.get(p.b)!.completed));
  return withInterval(percentile(b, 99) / percentile(a, 99), percentileRatioInterval(a, b, { p: 99 }));
}

/** p99 counting the unfinished, b over a, over the requests both runs of a pair measured, and its paired interval. */
function pairedRatio(pairs: Pair[]): string {
  const a: number[] = [];
  const b: number[] = [];
  for (const pair of pairs) {
    const treated = waitsOf.get(pair.b)!.byRequest;
    for (const [id, wait] of waitsOf.get(pair.a)!.byRequest) {
      const other = treated.get(id);
      if (other === undefined) continue;
      a.push(wait);
      b.push(other);
    }
  }
  return withInterval(percentile(b, 99) / percentile(a, 99), pairedPercentileRatioInterval(a, b, { p: 99 }));
}

function withInterval(ratio: number, { low, high }: Interval): string {
  return `${ratio.toFixed(2)} [${low.toFixed(2)}–${high.toFixed(2)}]`;
}

function pooled(samples: Float64Array[]): Float64Array {
  const out = new Float64Array(samples.reduce((n, s) => n + s.length, 0));
  let at = 0;
  for (const s of samples) {
    out.set(s, at);
    at += s.length;
  }
  return out;
}

/** "fold/seed" for Weka, "window/seed" for Mooncake. */
function sampleOf(c: Cell): string {
  return `${c.sample}/${c.seed}`;
}

for (const other of base ? others : []) {
  console.log(`\n${other.name} against ${base!.name}, worst cell over folds (windows) and seeds:\n`);
  console.log(
    "| trace | load | CPU GB | routers | cells | Δ captured (worst) | TTFT p99 ratio (worst) | p99 lower in | with unfinished: ratio (worst) | lower in | pooled: p99 ratio [95%] | with unfinished, paired [95%] |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
  const groups = grid.filter((c, i) => grid.findIndex((d) => sameGroup(c, d)) === i);
  for (const group of groups) {
    const pairs = grid
      .filter((c) => sameGroup(c, group))
      .map((c) => {
        const of = (name: string) => rows.find((r) => r.policy === name && sameCell(r, c))!;
        return { a: of(base!.name), b: of(other.name) };
      });
    const worstDelta = Math.min(...pairs.map(({ a, b }) => b.captured - a.captured));
    const p99 = (key: "ttftP99Ms" | "waitingP99Ms") => ({
      worst: Math.max(...pairs.map(({ a, b }) => b[key] / a[key])).toFixed(2),
      lower: `${pairs.filter(({ a, b }) => b[key] < a[key]).length} of ${pairs.length}`,
    });
    const completed = p99("ttftP99Ms");
    const waiting = p99("waitingP99Ms");
    console.log(
      `| ${group.trace} | ${group.load} | ${group.offloadGb} | ${group.routers} | ${pairs.length} | ${(worstDelta * 100).toFixed(1)} | ${completed.worst} | ${completed.lower} | ${waiting.worst} | ${waiting.lower} | ${completedRatio(pairs)} | ${pairedRatio(pairs)} |`,
    );
  }
}

if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
