/** Plain-text tables of run summaries for the terminal (and docs). */
import type { RunSummary } from "../measure/summary.ts";

/** One row: a label, the summary and optional extra columns (e.g. wall-clock speed). */
export interface SummaryRow {
  label: string;
  summary: RunSummary;
  /** Simulated seconds per wall second (fleet runs only). */
  speed?: number;
}

const pct = (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : "–");
const ms = (v: number) =>
  Number.isFinite(v) ? (v >= 10_000 ? `${(v / 1000).toFixed(1)}s` : `${Math.round(v)}`) : "–";
const num = (v: number, digits = 0) => (Number.isFinite(v) ? v.toFixed(digits) : "–");

const COLUMNS: [string, (r: SummaryRow) => string][] = [
  ["run", (r) => r.label],
  ["reqs", (r) => `${r.summary.completed}/${r.summary.requests}`],
  ["hit", (r) => pct(r.summary.hitRate)],
  ["ideal", (r) => pct(r.summary.idealHitRate)],
  ["captured", (r) => pct(r.summary.captured)],
  ["ttft p50", (r) => ms(r.summary.ttftMs.p50)],
  ["ttft p99", (r) => ms(r.summary.ttftMs.p99)],
  ["itl p50", (r) => num(r.summary.itlMs.p50, 1)],
  ["e2e p50", (r) => ms(r.summary.e2eMs.p50)],
  ["queue p99", (r) => ms(r.summary.queueMs.p99)],
  ["in tok/s", (r) => num(r.summary.inputTokensPerS)],
  ["out tok/s", (r) => num(r.summary.outputTokensPerS)],
  ["goodput", (r) => `${num(r.summary.goodputRps, 2)} (${pct(r.summary.sloAttainment)})`],
  ["spread", (r) => num(r.summary.loadSpread, 2)],
  ["preempt", (r) => num(r.summary.preemptions)],
  ["$/M in", (r) => num(r.summary.costPerMInput, 3)],
  ["$/M out", (r) => num(r.summary.costPerMOutput, 2)],
  ["sim×", (r) => (r.speed === undefined ? "" : num(r.speed, 1))],
];

/** Renders rows as an aligned text table (a Markdown table when `markdown`). */
export function renderTable(rows: readonly SummaryRow[], markdown = false): string {
  const cells = [COLUMNS.map(([h]) => h), ...rows.map((r) => COLUMNS.map(([, f]) => f(r)))];
  if (markdown) {
    const line = (c: string[]) => `| ${c.join(" | ")} |`;
    return [line(cells[0]!), line(COLUMNS.map(() => "---")), ...cells.slice(1).map(line)].join("\n");
  }
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells
    .map((c) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join("  "))
    .join("\n");
}
