/** The doctor's report as text: one ✔/✘/!/– line per finding, its fix below, a verdict last. */
import type { Verdict } from "./findings.ts";
import type { DoctorReport } from "./doctor.ts";

const MARK: Readonly<Record<Verdict, string>> = { pass: "✔", fail: "✘", warn: "!", skip: "–" };

/** The report's lines. */
export function reportLines(report: DoctorReport): string[] {
  const lines = report.findings.flatMap((f) => [
    `${MARK[f.verdict]} ${f.check}: ${f.message}`,
    ...(f.fix ? [`    fix: ${f.fix}`] : []),
  ]);
  const failed = report.findings.filter((f) => f.verdict === "fail").length;
  const warned = report.findings.filter((f) => f.verdict === "warn").length;
  const counts = `${failed} problem${failed === 1 ? "" : "s"}, ${warned} warning${warned === 1 ? "" : "s"}`;
  lines.push(
    report.ok
      ? `doctor: ${report.endpoints} endpoints, ${counts}: ok`
      : `doctor: ${report.endpoints} endpoints, ${counts}: FAILED`,
  );
  return lines;
}
