/** A self-contained HTML report: the summary table and inline SVG charts. */
import { sortedCopy } from "../measure/percentile.ts";
import type { LoadTimeline, RequestRecord } from "../measure/records.ts";
import { esc, heatmap, lineChart, type Series } from "./svg.ts";
import { renderTable, type SummaryRow } from "./table.ts";

/** One run as the report shows it. */
export interface ReportRun extends SummaryRow {
  /** Series name in sweep charts (e.g. the policy). */
  group: string;
  /** Load level of a sweep point (sessions, rps or time scale), when swept. */
  load?: number;
  records: readonly RequestRecord[];
  timeline?: LoadTimeline;
  /** Measurement window, ms. */
  fromMs: number;
  toMs: number;
}

/** TTFT CDF points (ms, fraction) of completed requests in the window, at most ~200 points. */
export function ttftCdf(run: ReportRun): [number, number][] {
  const ttft = sortedCopy(
    run.records
      .filter((r) => r.arrivalMs >= run.fromMs && r.arrivalMs < run.toMs && Number.isFinite(r.firstTokenMs))
      .map((r) => r.firstTokenMs - r.arrivalMs),
  );
  const step = Math.max(1, Math.floor(ttft.length / 200));
  const points: [number, number][] = [];
  for (let i = 0; i < ttft.length; i += step) points.push([ttft[i]!, (i + 1) / ttft.length]);
  if (ttft.length > 0) points.push([ttft[ttft.length - 1]!, 1]);
  return points;
}

function sweepCharts(runs: readonly ReportRun[]): string {
  const swept = runs.filter((r) => r.load !== undefined);
  if (new Set(swept.map((r) => r.load)).size < 2) return "";
  const groups = [...new Set(swept.map((r) => r.group))];
  const series = (metric: (r: ReportRun) => number): Series[] =>
    groups.map((g) => ({
      name: g,
      points: swept.filter((r) => r.group === g).map((r) => [r.load!, metric(r)] as [number, number]),
    }));
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  return [
    lineChart(
      series((r) => r.summary.hitRate),
      { title: "Prefix hit rate vs load", xLabel: "load", yLabel: "hit rate", yRange: [0, 1], yFormat: pct },
    ),
    lineChart(
      series((r) => r.summary.captured),
      {
        title: "Captured (achieved / ideal) vs load",
        xLabel: "load",
        yLabel: "captured",
        yRange: [0, 1],
        yFormat: pct,
      },
    ),
    lineChart(
      series((r) => r.summary.ttftMs.p50),
      { title: "TTFT p50 vs load", xLabel: "load", yLabel: "ms" },
    ),
    lineChart(
      series((r) => r.summary.ttftMs.p99),
      { title: "TTFT p99 vs load", xLabel: "load", yLabel: "ms" },
    ),
    lineChart(
      series((r) => r.summary.loadSpread),
      { title: "Load spread (max/mean prefill) vs load", xLabel: "load", yLabel: "max/mean" },
    ),
  ].join("\n");
}

function loadHeatmaps(runs: readonly ReportRun[]): string {
  return runs
    .filter((r) => r.timeline)
    .map((r) => {
      const t = r.timeline!;
      const rows = Array.from({ length: t.endpoints }, (_, e) => t.buckets.map((b) => b[e]!));
      const title = `${r.label}: prefill tokens per endpoint over time (${(t.bucketMs / 1000).toFixed(0)} s buckets)`;
      return heatmap(rows, { title, rowLabel: "endpoint", colLabel: "time →" });
    })
    .join("\n");
}

/** The whole report page. */
export function renderHtmlReport(title: string, runs: readonly ReportRun[], notes = ""): string {
  const cdf = lineChart(
    runs.map((r) => ({ name: r.label, points: ttftCdf(r) })),
    {
      title: "TTFT distribution (CDF)",
      xLabel: "TTFT ms (log)",
      yLabel: "fraction",
      logX: true,
      yRange: [0, 1],
    },
  );
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:sans-serif;margin:24px;max-width:1400px}pre{font-size:12px;background:#f6f6f6;padding:8px;overflow-x:auto}svg{margin:8px;vertical-align:top}</style>
</head><body>
<h1>${esc(title)}</h1>
${notes ? `<p>${esc(notes)}</p>` : ""}
<pre>${esc(renderTable(runs))}</pre>
<p>hit = token-weighted prefix-cache hit at scheduling; ideal = one infinite cache over the same admitted requests; captured = hit / ideal; spread = max/mean prefill tokens per endpoint; goodput = requests/s meeting the SLO (share of arrivals).</p>
<div>${cdf}
${sweepCharts(runs)}</div>
<h2>Per-endpoint load over time</h2>
<div>${loadHeatmaps(runs)}</div>
</body></html>
`;
}
