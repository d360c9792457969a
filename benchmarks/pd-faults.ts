/**
 * `npm run bench -- pd-faults [--transfers N] [--failure-rate F] [--death-every-s S] [--seed N]`:
 * an xPyD fleet (4 prefill + 4 decode h200-llama3-8b replicas, llm-d's P/D config) under
 * shared-prefix traffic long enough for N KV transfers (default 100,000), with a fraction F of
 * transfers failing (default 0.01) and a random replica dying every S virtual seconds (default 10).
 * Prints progress, the outcome and P/D tables, then the invariants (src/fleet/pd-invariants.ts):
 * no request lost, no block leaked. Exits 1 when one breaks.
 */
import { fileURLToPath } from "node:url";
import { outcomeCounts, pdInvariantViolations } from "../src/fleet/pd-invariants.ts";
import { runScenario } from "../src/fleet/run-scenario.ts";
import { parseScenario } from "../src/workload/scenario.ts";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const transfers = flag("transfers", 100_000);
const failureRate = flag("failure-rate", 0.01);
const deathEveryS = flag("death-every-s", 10);
const seed = flag("seed", 1);
const RPS = 40;
const durationS = Math.ceil(transfers / RPS / (1 - failureRate)) + 10;

const yaml = `
name: pd-faults
seed: ${seed}
durationS: ${durationS}
drainS: 120
fleet:
  replicas: 8
  groups: [{ role: prefill, replicas: 4 }, { role: decode, replicas: 4 }]
  kvTransfer: { link: infiniband, abortTimeoutS: 30 }
router: { config: pd-policies/pd-epp.yaml }
workload: { type: shared-prefix, rps: ${RPS}, promptsPerGroup: 100000, systemTokens: 1500, questionTokens: 500, outputTokens: 64 }
faults: { transferFailureRate: ${failureRate}, replicaDeathEveryS: ${deathEveryS} }
`;
const scenario = parseScenario(
  yaml,
  fileURLToPath(new URL("../examples/scenarios/pd-faults.yaml", import.meta.url)),
);

console.log(
  `pd-faults: 4P4D, ${RPS} req/s for ${durationS} s (virtual), ${failureRate * 100}% transfer failures, a death every ${deathEveryS} s`,
);
let lastPrint = 0;
const run = await runScenario(scenario, (simulatedMs) => {
  if (simulatedMs - lastPrint < durationS * 100) return;
  lastPrint = simulatedMs;
  process.stdout.write(`  ${(simulatedMs / 1000).toFixed(0)} / ${durationS} s simulated\n`);
});
const { result } = run;
const pd = result.pd!;

function table(title: string, rows: [string, string | number][]): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  console.log(`\n${title}`);
  for (const [k, v] of rows)
    console.log(`  ${k.padEnd(width)}  ${typeof v === "number" ? v.toLocaleString("en-US") : v}`);
}

const sorted = [...pd.transferMs].sort((a, b) => a - b);
const quantile = (q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
table(
  "outcomes",
  [...outcomeCounts(result)].map(([k, v]) => [k, v]),
);
table("P/D", [
  ["P/D requests", pd.requests],
  ["transfers", pd.transfers],
  ["transfer GB", (pd.transferBytes / 1e9).toFixed(1)],
  ["transfer ms p50 / p99", `${quantile(0.5).toFixed(2)} / ${quantile(0.99).toFixed(2)}`],
  ["injected transfer failures", pd.transferFailures],
  ["stale engine (prefill restarted)", pd.staleTransfers],
  ["prefill legs sent again (their replica died)", pd.prefillRetries],
  ["local-prefill fallbacks", pd.fallbacks],
  ["decode died before its leg", pd.decodeLost],
  ["requests placed again (replica died before their first token)", result.retriedRequests],
  ["held KV freed by the abort timeout", pd.holdsExpired],
  ["replica deaths", result.deaths],
  ["streams cut by a death (after their first token)", result.killedRequests],
  ["GPU blocks in use at the end", result.blocksInUseAtEnd],
  ["wall s", (result.wallMs / 1000).toFixed(1)],
]);
const violations = pdInvariantViolations(result);
const attempted = pd.transfers + pd.transferFailures + pd.staleTransfers;
if (attempted < transfers) violations.push(`${attempted} transfers attempted, fewer than ${transfers}`);
console.log(
  violations.length === 0 ? "\ninvariants: hold (no request lost, no block leaked)" : "\ninvariants BROKEN:",
);
for (const v of violations) console.log(`  ${v}`);
process.exit(violations.length === 0 ? 0 : 1);
