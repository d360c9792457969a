/**
 * `llmd bench --url http://host:port scenario.yaml`: sends the scenario's workload over HTTP to any
 * OpenAI-compatible server (streaming completions, raw undici) and reports the same client-side
 * metrics as `llmd simulate`: TTFT, inter-token latency, cached tokens from usage, hit rate
 * against the ideal ceiling. The fleet section of the scenario only prices the run. Requests carry
 * their identity headers; when any names an objective (the `tenants` workload) it also prints the
 * per-tenant outcome table of the flow-control experiments (benchmarks/flow-experiments.ts). With
 * `--responses`, each agent's turns are a Responses chain against the router (docs/responses.md).
 */
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { SingleBar } from "cli-progress";
import { runLive, scenarioReplay } from "../../load/load-generator.ts";
import { startMetricsLog } from "../../load/metrics-log.ts";
import { runTenantClients } from "../../load/tenant-clients.ts";
import { summarize } from "../../measure/summary.ts";
import { renderTable } from "../../report/table.ts";
import { loadScenario, type Scenario } from "../../workload/scenario.ts";
import {
  formatTenantReport,
  TENANT_TABLE_HEADER,
  type TenantReport,
  tenantReport,
} from "../../report/tenant-report.ts";
import { numberFlag } from "../flags.ts";

interface BenchFlags {
  url: string;
  set: string[];
  timeScale: string;
  blockSize: string;
  json?: string;
  records?: string;
  metricsLog?: string;
  quiet?: boolean;
  label?: string;
  clientPerTenant?: boolean;
  responses?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Registers `llmd bench`. */
export function registerBench(program: Command): void {
  program
    .command("bench")
    .description(
      "replay a scenario's workload against an OpenAI-compatible URL and report client-side metrics",
    )
    .argument("<scenario>", "scenario YAML file")
    .requiredOption("--url <url>", "base URL of the server, e.g. http://127.0.0.1:8080")
    .option("--set <key=value>", "override a scenario field (repeatable)", collect, [])
    .option("--time-scale <x>", "run workload time x times faster than wall time", "1")
    .option("--block-size <n>", "server KV block size for the ideal ceiling", "16")
    .option("--json <file>", "write the summary as JSON")
    .option("--records <file>", "write every request's record as JSON Lines (times in workload ms)")
    .option(
      "--metrics-log <file>",
      "scrape the router's flow-control gauges and per-endpoint queues once a second, as JSON Lines",
    )
    .option("--quiet", "no progress bar")
    .option("--label <name>", "first column of the per-tenant table (default: the scenario's name)")
    .option(
      "--client-per-tenant",
      "one client thread per objective of the scenario, so one tenant's load does not delay reading another's tokens",
    )
    .option(
      "--responses",
      "send each agent's turns as a Responses chain (POST /v1/responses with previous_response_id and only the new input)",
    )
    .action(async (file: string, flags: BenchFlags) => {
      const scenario = loadScenario(file, flags.set);
      const durationMs = scenario.durationS * 1000;
      const bar = new SingleBar({
        format: "bench |{bar}| {value}/{total} s  in flight {inFlight}",
        stream: process.stderr,
      });
      if (!flags.quiet) bar.start(scenario.durationS, 0, { inFlight: 0 });
      const common = {
        url: flags.url,
        timeScale: numberFlag("time-scale", flags.timeScale, { min: Number.MIN_VALUE }),
        blockTokens: numberFlag("block-size", flags.blockSize, { min: 1, integer: true }),
        onProgress: (ms: number, inFlight: number) =>
          bar.update(Math.min(scenario.durationS, Math.round(ms / 1000)), { inFlight }),
      };
      const tenants = Object.keys(scenario.objectives);
      if (flags.clientPerTenant && tenants.length === 0) {
        throw new Error("--client-per-tenant needs a scenario with objectives");
      }
      if (flags.clientPerTenant && flags.responses) {
        throw new Error("--responses is not supported with --client-per-tenant");
      }
      const startedAt = performance.now();
      const metricsLog =
        flags.metricsLog === undefined
          ? undefined
          : startMetricsLog(flags.url, () => (performance.now() - startedAt) * common.timeScale);
      const records = flags.clientPerTenant
        ? await runTenantClients({ ...common, scenarioFile: file, overrides: flags.set, tenants })
        : await runLive({ ...common, ...scenarioReplay(scenario), responses: flags.responses ?? false });
      const samples = await metricsLog?.stop();
      if (!flags.quiet) bar.stop();
      const window = { fromMs: scenario.warmupS * 1000, toMs: durationMs };
      const summary = summarize(records, {
        ...window,
        slo: scenario.slo,
        gpuHourPrice: scenario.price.gpuHour,
        gpus: scenario.fleet.replicas,
      });
      console.log(renderTable([{ label: scenario.name ?? "bench", summary }]));
      const byTenant = records.some((r) => r.tenant !== "default")
        ? tenantReport(records, window.fromMs, window.toMs)
        : undefined;
      if (byTenant) console.log(tenantTable(byTenant, flags.label ?? scenario.name ?? "bench", scenario));
      const unanswered = countBy(records.filter((r) => r.outcome === undefined).map((r) => r.error ?? "?"));
      if (unanswered) console.log(`no answer (lost), by transport error: ${unanswered}`);
      if (flags.json) {
        writeFileSync(flags.json, `${JSON.stringify({ ...summary, tenants: byTenant }, null, 2)}\n`);
      }
      if (flags.records) writeFileSync(flags.records, jsonLines(records));
      if (flags.metricsLog && samples) writeFileSync(flags.metricsLog, jsonLines(samples));
    });
}

/** The flow-experiments table of a live run, so live and simulated rows line up. */
function tenantTable(report: TenantReport, label: string, scenario: Scenario): string {
  const load = "load" in scenario.workload ? String(scenario.workload.load) : "-";
  return [TENANT_TABLE_HEADER, ...formatTenantReport(report, label, load)].join("\n");
}

/** `code:n code:n …` of `codes` by count, or undefined for none. */
function countBy(codes: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const code of codes) counts.set(code, (counts.get(code) ?? 0) + 1);
  return counts.size === 0 ? undefined : [...counts].map(([code, n]) => `${code}:${n}`).join(" ");
}

function jsonLines(values: readonly unknown[]): string {
  return values.map((v) => `${JSON.stringify(v)}\n`).join("");
}
