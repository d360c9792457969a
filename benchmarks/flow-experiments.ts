/**
 * The flow-control experiments (docs/flow-control-experiments.md): the three-tenant scenario under each router config at each
 * offered load, one table row per tenant. Usage:
 *   node --import tsx benchmarks/flow-experiments.ts [--loads 0.5,1,1.5,2]
 *     [--configs no-flow-control,llm-d-flow-control,ours] [--set key=value ...] [--tail chat]
 * `--tail <tenant>` adds where that tenant's requests above its p95 TTFT spent their time.
 * `--mixes m1,m2,…` runs each named tenant mix (MIXES below: burst size, chat share, batch prompt
 * size, seed) instead of the scenario's own, and ends with one check line per config × mix: what
 * was shed or expired at the lowest load, chat's p99 at the highest load against the lowest, the
 * agent programs' Jain index at the highest load and the requests lost anywhere.
 * Configs are files in examples/scenarios/tenants/ (name without .yaml).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadScenario } from "../src/workload/scenario.ts";
import { runScenario } from "../src/fleet/run-scenario.ts";
import {
  formatTenantReport,
  TENANT_TABLE_HEADER,
  type TailBreakdown,
  tailBreakdown,
  tenantReport,
} from "../src/report/tenant-report.ts";

const dir = join(dirname(fileURLToPath(import.meta.url)), "../examples/scenarios/tenants");

const { values } = parseArgs({
  options: {
    loads: { type: "string", default: "0.5,1,1.5,2" },
    configs: { type: "string", default: "no-flow-control,llm-d-flow-control,ours" },
    set: { type: "string", multiple: true, default: [] },
    tail: { type: "string" },
    mixes: { type: "string" },
  },
});

/**
 * Tenant mixes around the tuned one (TENANT_DEFAULTS: bursts of 50 at 0.26/s per program, 5.2 chat
 * conversations/s, 8K-token batch prompts at 5.2/s, seed 1). Agent volume stays the same when the
 * burst grows (the burst rate falls by the same factor), so the mixes differ in shape, not in load.
 */
const MIXES: Record<string, string[]> = {
  tuned: [],
  "b150-chat1.5-batch16k": [
    "workload.burstSize=150",
    "workload.agentBurstsPerS=0.0867",
    "workload.chatSessionsPerS=7.8",
    "workload.batchInputTokens=16000",
    "workload.batchPerS=2.6",
    "seed=2",
  ],
  "b200-batch4k": [
    "workload.burstSize=200",
    "workload.agentBurstsPerS=0.065",
    "workload.batchInputTokens=4000",
    "workload.batchPerS=10.4",
    "seed=3",
  ],
  "b100-chat0.5": [
    "workload.burstSize=100",
    "workload.agentBurstsPerS=0.13",
    "workload.chatSessionsPerS=2.6",
    "workload.batchInputTokens=12000",
    "workload.batchPerS=3.5",
    "seed=4",
  ],
  "b75-chat2": [
    "workload.burstSize=75",
    "workload.agentBurstsPerS=0.173",
    "workload.chatSessionsPerS=10.4",
    "seed=5",
  ],
};

function tail(t: TailBreakdown): string {
  const where = Object.entries(t.byReplicaTenant)
    .map(([tenant, n]) => `${tenant}:${n}`)
    .join(" ");
  const ms = (v: number) => v.toFixed(0);
  return (
    `  ${t.tenant} > p95 (${ms(t.thresholdMs)} ms): n=${t.count} TTFT ${ms(t.ttftMs)} = queued ${ms(t.queuedMs)}` +
    ` + engine wait ${ms(t.engineWaitMs)} + first step(s) ${ms(t.firstStepsMs)};` +
    ` cached ${ms(t.cachedTokens)}/${ms(t.inputTokens)} tokens; on replicas mostly serving ${where}`
  );
}

interface Check {
  label: string;
  shedLow: number;
  chatP99: number[];
  jainHigh: number;
  lost: number;
}
const checks: Check[] = [];
const mixes = values.mixes ? values.mixes.split(",") : [undefined];
for (const mix of mixes)
  if (mix !== undefined && !MIXES[mix]) throw new Error(`unknown mix ${mix}: ${Object.keys(MIXES)}`);
const loads = values.loads.split(",");

console.log(TENANT_TABLE_HEADER);
for (const config of values.configs.split(","))
  for (const mix of mixes) {
    const check: Check = {
      label: mix ? `${config} ${mix}` : config,
      shedLow: 0,
      chatP99: [],
      jainHigh: Number.NaN,
      lost: 0,
    };
    checks.push(check);
    for (const [li, load] of loads.entries()) {
      const mixOverrides = mix ? MIXES[mix]! : [];
      const overrides = [
        `router.config=${config}.yaml`,
        `workload.load=${load}`,
        ...mixOverrides,
        ...values.set,
      ];
      const scenario = loadScenario(join(dir, "tenants.yaml"), overrides);
      const run = await runScenario(scenario);
      const window = [scenario.warmupS * 1000, scenario.durationS * 1000] as const;
      const report = tenantReport(run.result.records, ...window);
      const speed = run.result.simulatedMs / Math.max(1, run.result.wallMs);
      for (const t of report.tenants) {
        check.lost += t.lost;
        if (li === 0) check.shedLow += Object.values(t.dropped).reduce((a, b) => a + b, 0);
        if (t.tenant === "chat" && (li === 0 || li === loads.length - 1)) check.chatP99.push(t.ttftP99);
      }
      if (li === loads.length - 1) check.jainHigh = report.jain;
      const lines = formatTenantReport(report, mix ? `${config}/${mix}`.slice(0, 19) : config, load);
      lines[lines.length - 1] +=
        `  [${(run.result.wallMs / 1000).toFixed(0)} s wall, ${speed.toFixed(0)}× real time]`;
      console.log(lines.join("\n"));
      const breakdown = values.tail && tailBreakdown(run.result.records, ...window, values.tail);
      if (breakdown) console.log(tail(breakdown));
    }
  }

if (mixes[0] !== undefined) {
  console.log(
    `\ncheck: shed or expired at load ${loads[0]}, chat p99 at ${loads.at(-1)} / at ${loads[0]}, Jain at ${loads.at(-1)}, lost`,
  );
  for (const c of checks) {
    const [low, high] = [c.chatP99[0]!, c.chatP99.at(-1)!];
    console.log(
      `${c.label.padEnd(42)} shed ${String(c.shedLow).padStart(4)}  chat p99 ${high.toFixed(0)}/${low.toFixed(0)} ms = ${(high / low).toFixed(2)}×  Jain ${c.jainHigh.toFixed(3)}  lost ${c.lost}`,
    );
  }
}
