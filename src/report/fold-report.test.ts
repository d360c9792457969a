import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { RunSummary } from "../measure/summary.ts";
import { checkCells, type FoldRun, foldDetailTable, foldSummaryTable, stat } from "./fold-report.ts";

function run(
  policy: string,
  fold: number,
  seed: number,
  captured: number,
  p99: number,
  goodput: number,
): FoldRun {
  const summary = { captured, ttftMs: { p50: 0, p90: 0, p99 }, goodputRps: goodput } as RunSummary;
  return { policy, fold, load: 96, seed, summary };
}

const runs = [
  run("ours", 1, 1, 0.99, 8000, 3.0),
  run("ours", 2, 1, 0.95, 12000, 2.5),
  run("base", 1, 1, 0.98, 9000, 3.1),
  run("base", 2, 1, 0.96, 10000, 2.0),
  run("other", 1, 1, 0.5, 4000, 1.0),
];

describe("fold report", () => {
  it("worst is the lowest captured and goodput but the highest p99; spread is max − min", () => {
    const ours = runs.filter((r) => r.policy === "ours");
    assert.deepEqual(stat(ours, "captured"), {
      worst: 0.95,
      best: 0.99,
      spread: 0.99 - 0.95,
      mean: 0.97,
      n: 2,
    });
    assert.equal(stat(ours, "ttftP99Ms").worst, 12000);
    assert.equal(stat(ours, "goodputRps").worst, 2.5);
    assert.equal(stat([], "captured").n, 0);
  });

  it("checks each cell against the reference's captured and the best other p99", () => {
    const cells = checkCells(runs, "ours", "base");
    assert.equal(cells.length, 2);
    const [f1, f2] = cells;
    assert.ok(Math.abs(f1!.capturedDeltaPts - 1) < 1e-9);
    assert.equal(f1!.p99Ratio, 2); // "other" has the lowest p99 in fold 1
    assert.equal(f1!.bestCaptured, true);
    assert.equal(f1!.bestGoodput, false);
    assert.ok(Math.abs(f2!.capturedDeltaPts + 1) < 1e-9);
    assert.equal(f2!.p99Ratio, 1.2);
    assert.equal(f2!.bestGoodput, true);
    // a cell without the reference is not checked
    assert.equal(checkCells(runs, "ours", "missing").length, 0);
  });

  it("tables show every policy × load and each fold's seeds", () => {
    const summary = foldSummaryTable(runs);
    assert.match(
      summary,
      /\| ours \| 96 \| 2 \| 95\.0 \/ 4\.0 \/ 97\.0 \| 12\.0 \/ 4\.0 \/ 10\.0 \| 2\.50 \/ 0\.50 \/ 2\.75 \|/,
    );
    assert.equal(summary.split("\n").length, 2 + 3);
    assert.match(foldDetailTable(runs), /\| base \| 96 \| 2 \| 96\.0 \| 10\.0 \| 2\.00 \|/);
  });
});
