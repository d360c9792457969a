/** What `llmd doctor` reports: one finding per problem found, or one passing line per check. */

/** `pass` ✔, `warn` ! (not verified or suspicious), `fail` ✘ (exits non-zero), `skip` –. */
export type Verdict = "pass" | "warn" | "fail" | "skip";

/** One line of the report. */
export interface Finding {
  check: string;
  verdict: Verdict;
  message: string;
  /** What to change, for `warn` and `fail`. */
  fix?: string;
}

/** A finding of `check`. */
export const finding = (check: string, verdict: Verdict, message: string, fix?: string): Finding => ({
  check,
  verdict,
  message,
  ...(fix === undefined ? {} : { fix }),
});

/** `findings` when any is a problem, else one `pass` finding saying `allGood`. */
export function orPass(check: string, findings: Finding[], allGood: string): Finding[] {
  return findings.some((f) => f.verdict === "fail" || f.verdict === "warn")
    ? findings
    : [finding(check, "pass", allGood)];
}
