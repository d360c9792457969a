/**
 * The flow-control experiments (docs/flow-control-experiments.md): the three-tenant scenario under each router config at each
 * offered load, one table row per tenant. Usage:
 *   node --import tsx benchmarks/flow-experiments.ts [--loads 0.5,1,1.5,2]
 *     [--configs no-flow-control,llm-d-flow-control,ours] [--set key=value ...] [--tail chat]
 * `--tail <tenant>` adds where that tenant's requests above its p95 TTFT spent their time.
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
  },
});

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

console.log(TENANT_TABLE_HEADER);
for (const config of values.configs.split(",")) {
  for (const load of values.loads.split(",")) {
    const overrides = [`router.config=${config}.yaml`, `workload.load=${load}`, ...values.set];
    const scenario = loadScenario(join(dir, "tenants.yaml"), overrides);
    const run = await runScenario(scenario);
    const window = [scenario.warmupS * 1000, scenario.durationS * 1000] as const;
    const report = tenantReport(run.result.records, ...window);
    const speed = run.result.simulatedMs / Math.max(1, run.result.wallMs);
    const lines = formatTenantReport(report, config, load);
    lines[lines.length - 1] +=
      `  [${(run.result.wallMs / 1000).toFixed(0)} s wall, ${speed.toFixed(0)}× real time]`;
    console.log(lines.join("\n"));
    const breakdown = values.tail && tailBreakdown(run.result.records, ...window, values.tail);
    if (breakdown) console.log(tail(breakdown));
  }
}
