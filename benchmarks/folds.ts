/**
 * Cross-validated policy comparison on the Weka (Claude Code) sessions: the development sessions
 * are split into k folds by a hash of the session id (workload.fold, src/workload/weka.ts); every
 * policy runs on every chosen fold × load × seed, and the tables report the worst cell and the
 * spread, not the best run. Choose parameters on the tuning fold(s), report the others.
 *
 *   npm run bench -- folds [--folds 1,2] [--k 3] [--loads 32,96,192] [--seeds 1,2,3]
 *     [--policies llm-d-default,session-sticky,ours] [--candidate ours] [--reference llm-d-default]
 *     [--scenario examples/scenarios/weka-16.yaml] [--set key=value …] [--json out.json]
 *     [--html out.html] [--records dir] [--from a.json,b.json]
 *
 * `--from` prints the tables of earlier `--json` outputs (merged; filtered by --policies, --folds,
 * --loads and --seeds by name) instead of running.
 * Policies are names of examples/scenarios/policies/*.yaml or paths. Defaults: durationS=300,
 * warmupS=60 (as docs/benchmarks.md), folds 1 and 2 of 3 (fold 0 is the tuning fold).
 *
 * TTFT p99 here counts every request of the measured window that was not failed or rejected: one
 * still without a first token at the drain cut counts as waiting until the cut (a lower bound).
 * The simulator's summary leaves such requests out, which would credit a policy that starves
 * some sessions with a shorter tail. Their number is printed as `unfinished`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { runScenario } from "../src/fleet/run-scenario.ts";
import { waitingTail } from "../src/measure/waiting-tail.ts";
import {
  checkCells,
  type FoldRun,
  foldDetailTable,
  foldSummaryTable,
  stat,
} from "../src/report/fold-report.ts";
import { esc, lineChart } from "../src/report/svg.ts";
import { loadScenario } from "../src/workload/scenario.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    scenario: { type: "string", default: join(root, "examples/scenarios/weka-16.yaml") },
    policies: { type: "string", default: "llm-d-default,session-sticky,ours" },
    k: { type: "string", default: "3" },
    folds: { type: "string", default: "1,2" },
    loads: { type: "string", default: "32,96,192" },
    seeds: { type: "string", default: "1,2,3" },
    candidate: { type: "string", default: "ours" },
    reference: { type: "string", default: "llm-d-default" },
    set: { type: "string", multiple: true, default: [] },
    json: { type: "string" },
    html: { type: "string" },
    records: { type: "string" },
    from: { type: "string" },
  },
});

const list = (s: string) => s.split(",").filter(Boolean);
const numbers = (s: string) => list(s).map(Number);
const policyPath = (p: string) =>
  p.endsWith(".yaml") ? resolve(p) : join(root, "examples/scenarios/policies", `${p}.yaml`);
const policyName = (p: string) => basename(p).replace(/\.ya?ml$/, "");

const missing = values.from
  ? []
  : list(values.policies)
      .map(policyPath)
      .filter((p) => !existsSync(p));
if (missing.length > 0) {
  console.error(
    `no policy file ${missing.join(", ")}: a policy is a name in examples/scenarios/policies or a .yaml path`,
  );
  process.exit(2);
}

const k = Number(values.k);
const grid = list(values.policies).flatMap((policy) =>
  numbers(values.folds).flatMap((fold) =>
    numbers(values.loads).flatMap((load) =>
      numbers(values.seeds).map((seed) => ({ policy, fold, load, seed })),
    ),
  ),
);

const runs: CountedRun[] = [];
const started = Date.now();
if (values.from) {
  const keep = (r: FoldRun) =>
    list(values.policies).map(policyName).includes(r.policy) &&
    numbers(values.folds).includes(r.fold) &&
    numbers(values.loads).includes(r.load) &&
    numbers(values.seeds).includes(r.seed);
  for (const file of list(values.from))
    runs.push(...(JSON.parse(readFileSync(file, "utf8")) as CountedRun[]).filter(keep));
  grid.length = 0;
} else
  console.log(
    `${grid.length} runs: policies ${values.policies}, folds ${values.folds} of ${k}, loads ${values.loads}, seeds ${values.seeds}`,
  );
for (const [i, cell] of grid.entries()) {
  const scenario = loadScenario(values.scenario, [
    "durationS=300",
    "warmupS=60",
    ...values.set,
    `router.config=${policyPath(cell.policy)}`,
    `workload.sessions=${cell.load}`,
    `workload.fold={k: ${k}, include: [${cell.fold}]}`,
    `seed=${cell.seed}`,
  ]);
  const run = await runScenario(scenario);
  const name = policyName(cell.policy);
  const tail = waitingTail(
    run.result.records,
    scenario.warmupS * 1000,
    scenario.durationS * 1000,
    (scenario.durationS + scenario.drainS) * 1000,
  );
  const s = { ...run.summary, ttftMs: { ...run.summary.ttftMs, p99: tail.p99Ms } };
  runs.push({ ...cell, policy: name, summary: s, unfinished: tail.unfinished });
  const elapsed = ((Date.now() - started) / 1000).toFixed(0);
  console.log(
    `[${i + 1}/${grid.length}, ${elapsed} s] ${name} fold ${cell.fold} load ${cell.load} seed ${cell.seed}: ` +
      `captured ${(s.captured * 100).toFixed(1)}% TTFT p99 ${(s.ttftMs.p99 / 1000).toFixed(1)} s ` +
      `goodput ${s.goodputRps.toFixed(2)} unfinished ${tail.unfinished} (${(run.result.wallMs / 1000).toFixed(0)} s wall)`,
  );
  if (values.records) {
    mkdirSync(values.records, { recursive: true });
    const file = join(values.records, `${name}-f${cell.fold}-l${cell.load}-s${cell.seed}.json`);
    writeFileSync(file, JSON.stringify(run.result.records));
  }
}

console.log("\nWorst over folds × seeds, spread = max − min:\n");
console.log(foldSummaryTable(runs));
console.log("\nPer fold (seeds in order):\n");
console.log(foldDetailTable(runs));
console.log("\nUnfinished (no first token by the drain cut), per fold, seeds in order:\n");
console.log(unfinishedTable(runs));

const cells = checkCells(runs, values.candidate, values.reference);
if (cells.length > 0) {
  console.log(
    `\n${values.candidate} against ${values.reference} (captured) and the best other policy (TTFT p99), per cell:\n`,
  );
  console.log("| load | cells | captured Δ pts worst | p99 ratio worst | best captured | best goodput |");
  console.log("|---|---|---|---|---|---|");
  for (const load of [...new Set(cells.map((c) => c.load))]) {
    const at = cells.filter((c) => c.load === load);
    const worstDelta = Math.min(...at.map((c) => c.capturedDeltaPts));
    const worstRatio = Math.max(...at.map((c) => c.p99Ratio));
    const count = (f: (c: (typeof at)[number]) => boolean) => `${at.filter(f).length}/${at.length}`;
    console.log(
      `| ${load} | ${at.length} | ${worstDelta.toFixed(1)} | ${worstRatio.toFixed(2)} | ${count((c) => c.bestCaptured)} | ${count((c) => c.bestGoodput)} |`,
    );
  }
}

if (values.json) writeFileSync(values.json, JSON.stringify(runs, null, 1));
if (values.html) {
  const policies = [...new Set(runs.map((r) => r.policy))];
  const chart = (metric: "captured" | "ttftP99Ms" | "goodputRps", title: string, yLabel: string) =>
    lineChart(
      policies.flatMap((p) =>
        (["worst", "best"] as const).map((which) => ({
          name: `${p} ${which}`,
          points: [...new Set(runs.map((r) => r.load))]
            .sort((a, b) => a - b)
            .map((load): [number, number] => {
              const v = stat(
                runs.filter((r) => r.policy === p && r.load === load),
                metric,
              )[which];
              return [load, metric === "captured" ? v * 100 : metric === "ttftP99Ms" ? v / 1000 : v];
            }),
        })),
      ),
      { title, xLabel: "concurrent sessions", yLabel },
    );
  const page = `<!doctype html><html><head><meta charset="utf-8"><title>folds</title>
<style>body{font-family:sans-serif;margin:24px}pre{font-size:12px;background:#f6f6f6;padding:8px}svg{margin:8px}</style></head><body>
<h1>Weka folds ${esc(values.folds)} of ${k}, seeds ${esc(values.seeds)}</h1>
<div>${chart("captured", "captured % (worst and best cell)", "%")}${chart("ttftP99Ms", "TTFT p99 s (worst and best cell)", "s")}${chart("goodputRps", "goodput rps (worst and best cell)", "rps")}</div>
<pre>${esc(foldSummaryTable(runs))}\n\n${esc(foldDetailTable(runs))}</pre></body></html>\n`;
  writeFileSync(values.html, page);
  console.log(`\nreport: ${values.html}`);
}

/** A run with the number of its measured requests still without a first token at the drain cut. */
type CountedRun = FoldRun & { unfinished?: number };

/** Markdown: unfinished requests per policy × load × fold, seeds in order. */
function unfinishedTable(all: readonly CountedRun[]): string {
  const lines = ["| policy | load | fold | unfinished |", "|---|---|---|---|"];
  const keys = new Map<string, CountedRun[]>();
  for (const r of all) {
    const key = `${r.policy} | ${r.load} | ${r.fold}`;
    keys.set(key, [...(keys.get(key) ?? []), r]);
  }
  for (const [key, group] of keys)
    lines.push(`| ${key} | ${group.map((r) => r.unfinished ?? "–").join(" / ")} |`);
  return lines.join("\n");
}
