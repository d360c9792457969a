/**
 * Cross-validation tables for routing policies: runs keyed by policy × fold × load × seed,
 * reduced to the worst fold (over folds and seeds) and the spread (max − min), and checked
 * against baselines cell by cell (the same fold, load and seed), so a policy is judged on its
 * worst held-out cell, never on its best run.
 */
import type { RunSummary } from "../measure/summary.ts";

/** One fleet run of the cross-validation grid. */
export interface FoldRun {
  policy: string;
  fold: number;
  load: number;
  seed: number;
  summary: RunSummary;
}

/** A metric over a set of runs: worst, best, spread (max − min) and mean. */
export interface Stat {
  worst: number;
  best: number;
  spread: number;
  mean: number;
  n: number;
}

/** Metrics reported per policy and load; `higher` says which direction is better. */
export const FOLD_METRICS = {
  captured: { get: (s: RunSummary) => s.captured, higher: true },
  ttftP99Ms: { get: (s: RunSummary) => s.ttftMs.p99, higher: false },
  goodputRps: { get: (s: RunSummary) => s.goodputRps, higher: true },
} as const;

/** Name of a reported metric. */
export type FoldMetric = keyof typeof FOLD_METRICS;

/** Worst / best / spread / mean of `metric` over `runs` (NaN fields when there are none). */
export function stat(runs: readonly FoldRun[], metric: FoldMetric): Stat {
  const { get, higher } = FOLD_METRICS[metric];
  const values = runs.map((r) => get(r.summary)).filter(Number.isFinite);
  if (values.length === 0)
    return { worst: Number.NaN, best: Number.NaN, spread: Number.NaN, mean: Number.NaN, n: 0 };
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return { worst: higher ? lo : hi, best: higher ? hi : lo, spread: hi - lo, mean, n: values.length };
}

/** The same fold, load and seed of another policy's runs. */
const cellKey = (r: FoldRun) => `${r.fold}|${r.load}|${r.seed}`;

/** Per-cell comparison of a candidate against baselines. */
export interface CellCheck {
  fold: number;
  load: number;
  seed: number;
  /** candidate captured − the reference baseline's captured (points, ×100). */
  capturedDeltaPts: number;
  /** candidate TTFT p99 / the lowest baseline TTFT p99 of the cell. */
  p99Ratio: number;
  /** Whether the candidate has the highest captured / goodput of all policies in the cell. */
  bestCaptured: boolean;
  bestGoodput: boolean;
}

/**
 * Compares `candidate` with every other policy in each (fold, load, seed) cell it ran:
 * captured against `reference`'s, TTFT p99 against the best of the others.
 */
export function checkCells(runs: readonly FoldRun[], candidate: string, reference: string): CellCheck[] {
  const byCell = new Map<string, FoldRun[]>();
  for (const r of runs) byCell.set(cellKey(r), [...(byCell.get(cellKey(r)) ?? []), r]);
  const out: CellCheck[] = [];
  for (const cell of byCell.values()) {
    const mine = cell.find((r) => r.policy === candidate);
    const others = cell.filter((r) => r.policy !== candidate);
    const ref = cell.find((r) => r.policy === reference);
    if (!mine || !ref || others.length === 0) continue;
    const s = mine.summary;
    out.push({
      fold: mine.fold,
      load: mine.load,
      seed: mine.seed,
      capturedDeltaPts: (s.captured - ref.summary.captured) * 100,
      p99Ratio: s.ttftMs.p99 / Math.min(...others.map((o) => o.summary.ttftMs.p99)),
      bestCaptured: others.every((o) => s.captured >= o.summary.captured),
      bestGoodput: others.every((o) => s.goodputRps >= o.summary.goodputRps),
    });
  }
  return out.sort((a, b) => a.load - b.load || a.fold - b.fold || a.seed - b.seed);
}

const pct = (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(1)}` : "–");
const sec = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : "–");
const rps = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : "–");

/** Markdown table: one row per policy × load, worst (over folds × seeds), spread and mean. */
export function foldSummaryTable(runs: readonly FoldRun[]): string {
  const lines = [
    "| policy | load | runs | captured % worst / spread / mean | TTFT p99 s worst / spread / mean | goodput rps worst / spread / mean |",
    "|---|---|---|---|---|---|",
  ];
  for (const policy of unique(runs.map((r) => r.policy))) {
    for (const load of unique(runs.map((r) => r.load)).sort((a, b) => a - b)) {
      const group = runs.filter((r) => r.policy === policy && r.load === load);
      if (group.length === 0) continue;
      const c = stat(group, "captured");
      const t = stat(group, "ttftP99Ms");
      const g = stat(group, "goodputRps");
      lines.push(
        `| ${policy} | ${load} | ${c.n} | ${pct(c.worst)} / ${pct(c.spread)} / ${pct(c.mean)} | ` +
          `${sec(t.worst)} / ${sec(t.spread)} / ${sec(t.mean)} | ${rps(g.worst)} / ${rps(g.spread)} / ${rps(g.mean)} |`,
      );
    }
  }
  return lines.join("\n");
}

/** Markdown table: one row per policy × load × fold, its seeds' captured / TTFT p99 / goodput. */
export function foldDetailTable(runs: readonly FoldRun[]): string {
  const seeds = unique(runs.map((r) => r.seed)).sort((a, b) => a - b);
  const lines = [
    `| policy | load | fold | captured % (seeds ${seeds.join("/")}) | TTFT p99 s | goodput rps |`,
    "|---|---|---|---|---|---|",
  ];
  for (const policy of unique(runs.map((r) => r.policy)))
    for (const load of unique(runs.map((r) => r.load)).sort((a, b) => a - b))
      for (const fold of unique(runs.map((r) => r.fold)).sort((a, b) => a - b)) {
        const at = (seed: number) =>
          runs.find((r) => r.policy === policy && r.load === load && r.fold === fold && r.seed === seed);
        const row = seeds.map(at);
        if (row.every((r) => r === undefined)) continue;
        const col = (f: (s: RunSummary) => string) => row.map((r) => (r ? f(r.summary) : "–")).join(" / ");
        lines.push(
          `| ${policy} | ${load} | ${fold} | ${col((s) => pct(s.captured))} | ${col((s) => sec(s.ttftMs.p99))} | ${col((s) => rps(s.goodputRps))} |`,
        );
      }
  return lines.join("\n");
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}
