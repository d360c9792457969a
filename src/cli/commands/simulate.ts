/**
 * `llmd simulate scenario.yaml…`: runs scenarios in the fleet simulator (real scheduler, real
 * engines, virtual time), prints a summary table, shows progress on stderr and writes an HTML
 * report with inline SVG charts. Several files (or `--compare a b …`) run side by side;
 * `--sweep key=v1,v2` repeats each scenario per value (e.g. `workload.sessions=16,32,64`).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { Command } from "commander";
import { SingleBar } from "cli-progress";
import { renderHtmlReport, type ReportRun } from "../../report/html.ts";
import { renderTable } from "../../report/table.ts";
import { executeRun, type PlannedRun, planCampaign } from "../../fleet/campaign.ts";
import { FLEET_TOKENIZER } from "../../fleet/run-scenario.ts";

/** The line every report carries: which tokenizer counted the tokens. */
const TOKENIZER_NOTE = `tokenizer: ${FLEET_TOKENIZER.name} (the stand-in, 4 characters per token)`;

interface SimulateFlags {
  compare?: string[];
  set: string[];
  sweep?: string;
  policy?: string[];
  html?: string | false;
  json?: string;
  markdown?: boolean;
  quiet?: boolean;
}

const collect = (value: string, previous: string[]) => [...previous, value];

/** Registers `llmd simulate`. */
export function registerSimulate(program: Command): void {
  program
    .command("simulate")
    .description("simulate a fleet (real scheduler + engines in virtual time) for one or more scenarios")
    .argument("[scenarios...]", "scenario YAML files")
    .option("--compare <scenarios...>", "scenario files to run side by side")
    .option("--set <key=value>", "override a scenario field (repeatable), e.g. fleet.replicas=8", collect, [])
    .option("--sweep <key=v1,v2,...>", "run each scenario once per value, e.g. workload.sessions=16,64")
    .option("--policy <configs...>", "router config files: run each scenario once per policy")
    .option("--html <file>", "HTML report path (default reports/simulate-<first>.html)")
    .option("--no-html", "do not write an HTML report")
    .option("--json <file>", "write summaries as JSON")
    .option("--markdown", "print the table as Markdown")
    .option("--quiet", "no progress bar")
    .action(async (scenarios: string[], flags: SimulateFlags) => {
      const files = [...scenarios, ...(flags.compare ?? [])];
      if (files.length === 0) throw new Error("give at least one scenario file");
      const planned = planCampaign({
        files,
        overrides: flags.set,
        ...(flags.sweep ? { sweep: flags.sweep } : {}),
        ...(flags.policy ? { policies: flags.policy } : {}),
      });
      const runs: ReportRun[] = [];
      for (const run of planned) runs.push(await runWithProgress(run, flags.quiet === true));
      console.log(TOKENIZER_NOTE);
      console.log(renderTable(runs, flags.markdown === true));
      writeOutputs(planned, runs, flags);
    });
}

async function runWithProgress(run: PlannedRun, quiet: boolean): Promise<ReportRun> {
  if (quiet) return executeRun(run);
  // The simulation runs synchronously, so cli-progress's timer-driven non-TTY output never fires:
  // piped runs print a plain line per 10% instead.
  if (!process.stderr.isTTY) return executeRun(run, lineProgress(run));
  const total = run.scenario.durationS;
  const bar = new SingleBar({
    format: `${run.label.padEnd(24)} |{bar}| {value}/{total} sim s  {speed} sim s per wall s`,
    stream: process.stderr,
    hideCursor: true,
  });
  const started = performance.now();
  bar.start(total, 0, { speed: "–" });
  const result = await executeRun(run, (ms) => {
    const speed = ms / Math.max(1, performance.now() - started);
    bar.update(Math.min(total, Math.round(ms / 1000)), { speed: speed.toFixed(1) });
  });
  bar.update(total, { speed: (result.speed ?? 0).toFixed(1) });
  bar.stop();
  return result;
}

function lineProgress(run: PlannedRun): (simulatedMs: number) => void {
  const started = performance.now();
  const totalMs = run.scenario.durationS * 1000;
  let next = 0.1;
  return (ms) => {
    if (ms < next * totalMs) return;
    next = Math.floor((ms / totalMs) * 10 + 1) / 10;
    const wall = (performance.now() - started) / 1000;
    console.error(
      `${run.label}: ${(ms / 1000).toFixed(0)}/${run.scenario.durationS} sim s, ${wall.toFixed(0)} s wall`,
    );
  };
}

function writeOutputs(planned: PlannedRun[], runs: ReportRun[], flags: SimulateFlags): void {
  if (flags.html !== false) {
    const path = flags.html ?? `reports/simulate-${planned[0]!.group}.html`;
    mkdirSync(dirname(path), { recursive: true });
    const title = `llmd simulate: ${planned.map((p) => p.group).join(", ")}`;
    writeFileSync(path, renderHtmlReport(title, runs, TOKENIZER_NOTE));
    console.error(`report: ${path}`);
  }
  if (flags.json) {
    const rows = runs.map((r) => ({
      label: r.label,
      group: r.group,
      load: r.load,
      speed: r.speed,
      tokenizer: FLEET_TOKENIZER.name,
      ...r.summary,
    }));
    writeFileSync(flags.json, `${JSON.stringify(rows, null, 2)}\n`);
  }
}
