/**
 * `npm run bench -- pd-compare [--only weka|mooncake|8k-1k] [--duration S]`: P/D against aggregated
 * serving on the same 4 h200-llama3-8b GPUs in the fleet simulator. Aggregated: 4 replicas behind
 * pd-epp.yaml's decode profile (examples/scenarios/pd-policies/aggregated.yaml). P/D: 1P3D, 2P2D
 * and 3P1D behind llm-d's P/D config (pd-epp.yaml: prefill when 16+ prompt tokens are not cached
 * on the decode pick), KV over InfiniBand. Workloads: Claude Code sessions (weka, closed loop) and
 * the Mooncake conversation trace (open loop), and 8K-in/1K-out requests (a 6K shared system
 * prompt, a 2K unique question, 1K out; 4 per second, Poisson). Prints TTFT and ITL p50/p99, goodput (requests
 * meeting TTFT ≤ 2 s and ITL ≤ 50 ms per second, and per GPU), the share of requests run as two
 * legs, the share of requests sent to the busiest (decode) endpoint, engine preemptions and the KV
 * moved.
 */
import { fileURLToPath } from "node:url";
import { runScenario } from "../src/fleet/run-scenario.ts";
import { parseScenario } from "../src/workload/scenario.ts";

const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const only = arg("only");

const WORKLOADS: Record<string, { durationS: number; warmupS: number; workload: string }> = {
  weka: {
    durationS: 600,
    warmupS: 120,
    workload: "{ type: weka, sessions: 16, warmFraction: 0.5, thinkCapS: 60 }",
  },
  mooncake: { durationS: 900, warmupS: 300, workload: "{ type: mooncake, timeScale: 1 }" },
  "8k-1k": {
    durationS: 300,
    warmupS: 60,
    workload:
      "{ type: shared-prefix, rps: 4, promptsPerGroup: 100000, systemTokens: 6000, questionTokens: 2000, outputTokens: 1000 }",
  },
};

const FLEETS: Record<string, { groups: string; config: string }> = {
  "aggregated 4": { groups: "[]", config: "pd-policies/aggregated.yaml" },
  "P/D 1P3D": {
    groups: "[{ role: prefill, replicas: 1 }, { role: decode, replicas: 3 }]",
    config: "pd-policies/pd-epp.yaml",
  },
  "P/D 2P2D": {
    groups: "[{ role: prefill, replicas: 2 }, { role: decode, replicas: 2 }]",
    config: "pd-policies/pd-epp.yaml",
  },
  "P/D 3P1D": {
    groups: "[{ role: prefill, replicas: 3 }, { role: decode, replicas: 1 }]",
    config: "pd-policies/pd-epp.yaml",
  },
};

/** The share of requests the busiest endpoint was sent (the decode side under P/D). */
function topEndpointShare(records: readonly { endpoint: number }[]): number {
  const counts = new Map<number, number>();
  for (const r of records) if (r.endpoint >= 0) counts.set(r.endpoint, (counts.get(r.endpoint) ?? 0) + 1);
  return Math.max(0, ...counts.values()) / Math.max(1, records.length);
}

const file = fileURLToPath(new URL("../examples/scenarios/pd-compare.yaml", import.meta.url));
const header = [
  "workload",
  "fleet",
  "reqs",
  "ttft p50",
  "ttft p99",
  "itl p50",
  "itl p99",
  "goodput/s",
  "per GPU",
  "P/D share",
  "top endpoint",
  "preempt",
  "KV GB",
  "wall s",
];
const rows: string[][] = [];
const ms = (v: number) =>
  Number.isFinite(v) ? (v >= 10_000 ? `${(v / 1000).toFixed(1)}s` : v.toFixed(0)) : "–";

for (const [workloadName, w] of Object.entries(WORKLOADS)) {
  if (only && only !== workloadName) continue;
  const durationS = Number(arg("duration") ?? w.durationS);
  for (const [fleetName, f] of Object.entries(FLEETS)) {
    const yaml = `
seed: 1
durationS: ${durationS}
warmupS: ${Math.min(w.warmupS, durationS / 4)}
drainS: 120
fleet:
  replicas: 4
  engine: { maxModelLen: 1048576 }
  groups: ${f.groups}
router: { config: ${f.config} }
workload: ${w.workload}
`;
    process.stdout.write(`running ${workloadName} on ${fleetName} …\n`);
    const run = await runScenario(parseScenario(yaml, file));
    const s = run.summary;
    const pd = run.result.pd!;
    rows.push([
      workloadName,
      fleetName,
      `${s.completed}/${s.requests}`,
      ms(s.ttftMs.p50),
      ms(s.ttftMs.p99),
      s.itlMs.p50.toFixed(1),
      s.itlMs.p99.toFixed(1),
      s.goodputRps.toFixed(3),
      (s.goodputRps / run.gpus).toFixed(3),
      `${((100 * pd.requests) / Math.max(1, run.result.records.length)).toFixed(0)}%`,
      `${(100 * topEndpointShare(run.result.records)).toFixed(0)}%`,
      String(run.result.preemptions),
      (pd.transferBytes / 1e9).toFixed(0),
      (run.result.wallMs / 1000).toFixed(0),
    ]);
  }
}

const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
console.log(`\n${line(header)}\n${line(widths.map((n) => "-".repeat(n)))}`);
for (const r of rows) console.log(line(r));
