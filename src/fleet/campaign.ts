/**
 * A set of fleet runs: every scenario file, at every value of an optional sweep, one after another
 * (one core each; runs are independent and deterministic).
 */
import { basename, resolve } from "node:path";
import type { ReportRun } from "../report/html.ts";
import { loadScenario, type Scenario } from "../workload/scenario.ts";
import { runScenario } from "./run-scenario.ts";

/** What to run. */
export interface CampaignSpec {
  files: readonly string[];
  /** `dotted.path=value` overrides applied to every scenario. */
  overrides: readonly string[];
  /** `dotted.path=v1,v2,…`: one run per value. */
  sweep?: string;
  /** Router config files: one run per policy (the group in sweep charts is the policy name). */
  policies?: readonly string[];
}

/** A planned run. */
export interface PlannedRun {
  label: string;
  group: string;
  load?: number;
  scenario: Scenario;
}

/** Expands files × policies × sweep values into validated scenarios (fails fast on any invalid one). */
export function planCampaign(spec: CampaignSpec): PlannedRun[] {
  const [key, list] = spec.sweep ? splitSweep(spec.sweep) : [undefined, [undefined]];
  const policies = spec.policies?.length ? spec.policies : [undefined];
  const runs: PlannedRun[] = [];
  for (const file of spec.files) {
    for (const policy of policies) {
      for (const value of list) {
        const overrides = [...spec.overrides];
        if (policy) overrides.push(`router.config=${resolve(policy)}`);
        if (value !== undefined) overrides.push(`${key}=${value}`);
        const scenario = loadScenario(file, overrides);
        const name = scenario.name ?? stem(file);
        const group = policy ? (spec.files.length > 1 ? `${name}/${stem(policy)}` : stem(policy)) : name;
        const load = value === undefined ? undefined : Number(value);
        const label = value === undefined ? group : `${group} @${value}`;
        runs.push({ label, group, scenario, ...(load === undefined ? {} : { load }) });
      }
    }
  }
  return runs;
}

const stem = (file: string) => basename(file).replace(/\.ya?ml$/, "");

function splitSweep(sweep: string): [string, string[]] {
  const eq = sweep.indexOf("=");
  if (eq <= 0) throw new Error(`--sweep expects key=v1,v2,…, got "${sweep}"`);
  return [sweep.slice(0, eq), sweep.slice(eq + 1).split(",")];
}

/** Runs one planned run and shapes it for reports. */
export async function executeRun(
  run: PlannedRun,
  onProgress?: (simulatedMs: number) => void,
): Promise<ReportRun> {
  const { result, summary } = await runScenario(run.scenario, onProgress);
  const speed = result.simulatedMs / Math.max(1, result.wallMs);
  return {
    label: run.label,
    group: run.group,
    ...(run.load === undefined ? {} : { load: run.load }),
    summary,
    speed,
    records: result.records,
    timeline: result.timeline,
    fromMs: run.scenario.warmupS * 1000,
    toMs: run.scenario.durationS * 1000,
  };
}
