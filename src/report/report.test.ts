import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LoadTimeline, newRecord } from "../measure/records.ts";
import { summarize } from "../measure/summary.ts";
import { parseAzure } from "../workload/azure.ts";
import { type ReportRun, renderHtmlReport, ttftCdf } from "./html.ts";
import { heatmap, lineChart } from "./svg.ts";
import { renderTable } from "./table.ts";

function run(label: string, load: number, ttfts: number[]): ReportRun {
  const records = ttfts.map((t, i) => ({
    ...newRecord(`r${i}`, "k", i * 100, 1000),
    firstTokenMs: i * 100 + t,
    endMs: i * 100 + t + 50,
    outputTokens: 6,
    cachedTokens: 500,
    idealCachedTokens: 800,
  }));
  const summary = summarize(records, {
    fromMs: 0,
    toMs: 10_000,
    slo: { ttftMs: 100, itlMs: 20 },
    gpuHourPrice: 1,
    gpus: 1,
  });
  const timeline = new LoadTimeline(1000, 2);
  timeline.add(0, 0, 10);
  timeline.add(1, 1500, 30);
  return { label, group: label.split(" ")[0]!, load, summary, records, timeline, fromMs: 0, toMs: 10_000 };
}

describe("reports", () => {
  const runs = [run("a @1", 1, [50, 150, 250]), run("a @2", 2, [80, 90]), run("b @1", 1, [10, 20])];

  it("renders an aligned table with hit, ideal and captured", () => {
    const lines = renderTable(runs).split("\n");
    assert.equal(lines.length, 4);
    assert.match(lines[1]!, /^a @1\s+3\/3\s+50\.0%\s+80\.0%\s+62\.5%/);
    assert.equal(new Set(lines.map((l) => l.length)).size, 1);
    assert.match(renderTable(runs, true).split("\n")[1]!, /^\| --- \|/);
  });

  it("TTFT CDF is ascending and ends at 1", () => {
    const cdf = ttftCdf(runs[0]!);
    assert.deepEqual(cdf.at(-1), [250, 1]);
    assert.ok(cdf.every((p, i) => i === 0 || p[0] >= cdf[i - 1]![0]));
  });

  it("HTML embeds SVG charts, sweep charts only for swept loads, and escapes labels", () => {
    const html = renderHtmlReport("t <x>", runs);
    assert.ok(html.includes("t &lt;x&gt;"));
    // CDF + 4 sweep charts + 3 heatmaps; load spread is unknown here (no prefill counts): a note
    assert.equal(html.match(/<svg /g)?.length, 1 + 4 + 3);
    assert.ok(html.includes("Load spread (max/mean prefill) vs load: no data"));
    assert.ok(html.includes("Prefix hit rate vs load"));
    const single = renderHtmlReport("one", [runs[0]!]);
    assert.ok(!single.includes("Prefix hit rate vs load"));
  });

  it("charts degrade to a note without data", () => {
    assert.match(lineChart([{ name: "x", points: [] }], { title: "T", xLabel: "x", yLabel: "y" }), /no data/);
    assert.match(heatmap([], { title: "H", rowLabel: "r", colLabel: "c" }), /no data/);
  });
});

describe("Azure CSV", () => {
  it("parses arrivals relative to the first row and the lengths", () => {
    const rows = parseAzure([
      "TIMESTAMP,ContextTokens,GeneratedTokens",
      "2023-11-16 18:15:46.6805900,374,44",
      "2023-11-16 18:15:50.9951690,396,109",
    ]);
    assert.deepEqual(rows, [
      { atMs: 0, input: 374, output: 44 },
      { atMs: 4315, input: 396, output: 109 },
    ]);
  });
});
