/**
 * `llmd doctor (--router <url> | --endpoints-file <file>) [--model m] [--timeout 5s] [--json]
 * [--no-test-request]`: checks a P/D deployment (src/doctor) and prints ✔/✘ lines, each problem
 * with what to fix; exits 1 when any check fails.
 */
import type { Command } from "commander";
import { LlmdError } from "../../api/errors.ts";
import { runDoctor } from "../../doctor/doctor.ts";
import { type DoctorEndpoint, endpointsFromFile, endpointsFromRouter } from "../../doctor/inventory.ts";
import { reportLines } from "../../doctor/report.ts";
import { durationFlag } from "../flags.ts";

interface DoctorFlags {
  router?: string;
  endpointsFile?: string;
  model?: string;
  timeout: string;
  json?: boolean;
  testRequest: boolean;
}

function endpointsOf(flags: DoctorFlags, timeoutMs: number): Promise<DoctorEndpoint[]> | DoctorEndpoint[] {
  if ((flags.router === undefined) === (flags.endpointsFile === undefined))
    throw new LlmdError("invalid_option", "give exactly one of --router <url> and --endpoints-file <file>");
  return flags.router !== undefined
    ? endpointsFromRouter(flags.router, timeoutMs)
    : endpointsFromFile(flags.endpointsFile!);
}

/** Registers `llmd doctor`. */
export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .description(
      "check a P/D deployment: roles, reachability, KV transfer config, models, one request through both legs",
    )
    .option("--router <url>", "a running llmd router (reads its GET /debug/endpoints)")
    .option(
      "--endpoints-file <file>",
      "an endpoints file (llm-d file-discovery format, as llmd router reads)",
    )
    .option("--model <name>", "model of the test request (default: the one every endpoint serves)")
    .option("--timeout <duration>", "per HTTP call", "5s")
    .option("--json", "print the report as JSON")
    .option("--no-test-request", "skip the request through both legs")
    .action(async (flags: DoctorFlags) => {
      const timeoutMs = durationFlag("timeout", flags.timeout);
      const endpoints = await endpointsOf(flags, timeoutMs);
      const report = await runDoctor(endpoints, {
        timeoutMs,
        testRequest: flags.testRequest,
        ...(flags.model ? { model: flags.model } : {}),
      });
      console.log(flags.json ? JSON.stringify(report, null, 2) : reportLines(report).join("\n"));
      process.exitCode = report.ok ? 0 : 1;
    });
}
