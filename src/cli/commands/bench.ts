/**
 * `llmd bench --url http://host:port scenario.yaml`: sends the scenario's workload over HTTP to any
 * OpenAI-compatible server (streaming completions, raw undici) and reports the same client-side
 * metrics as `llmd simulate`: TTFT, inter-token latency, cached tokens from usage, hit rate
 * against the ideal ceiling. The fleet section of the scenario only prices the run.
 */
import type { Command } from "commander";
import { SingleBar } from "cli-progress";
import { runLive } from "../../bench/live/load-generator.ts";
import { summarize } from "../../bench/metrics/summary.ts";
import { renderTable } from "../../bench/report/table.ts";
import { loadScenario } from "../../bench/scenario.ts";
import { createWorkload } from "../../bench/workloads/index.ts";
import { SyntheticPromptBuilder } from "../../bench/workloads/synthetic-prompt.ts";

interface BenchFlags {
  url: string;
  set: string[];
  timeScale: string;
  blockSize: string;
  json?: string;
  quiet?: boolean;
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
    .option("--quiet", "no progress bar")
    .action(async (file: string, flags: BenchFlags) => {
      const scenario = loadScenario(file, flags.set);
      const durationMs = scenario.durationS * 1000;
      const bar = new SingleBar({
        format: "bench |{bar}| {value}/{total} s  in flight {inFlight}",
        stream: process.stderr,
      });
      if (!flags.quiet) bar.start(scenario.durationS, 0, { inFlight: 0 });
      const records = await runLive({
        url: flags.url,
        model: scenario.model,
        workload: createWorkload(scenario.workload, { seed: scenario.seed, durationMs }),
        prompts: new SyntheticPromptBuilder(),
        durationMs,
        timeScale: Number(flags.timeScale),
        blockTokens: Number(flags.blockSize),
        onProgress: (ms, inFlight) =>
          bar.update(Math.min(scenario.durationS, Math.round(ms / 1000)), { inFlight }),
      });
      if (!flags.quiet) bar.stop();
      const summary = summarize(records, {
        fromMs: scenario.warmupS * 1000,
        toMs: durationMs,
        slo: scenario.slo,
        gpuHourPrice: scenario.price.gpuHour,
        gpus: scenario.fleet.replicas,
      });
      console.log(renderTable([{ label: scenario.name ?? "bench", summary }]));
      if (flags.json) {
        const { writeFileSync } = await import("node:fs");
        writeFileSync(flags.json, `${JSON.stringify(summary, null, 2)}\n`);
      }
    });
}
