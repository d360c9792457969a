/** llm-d's feature gates: `name`, `name=true` or `name=false`; unknown names are errors. */
import type { ConfigIssue } from "./issues.ts";

/** Registered gates and their defaults (llm-d §2.3). */
export const FEATURE_GATE_DEFAULTS: Readonly<Record<string, boolean>> = {
  flowControl: false,
  haPopulateNonLeaderDatastore: true,
};

/** Resolved gates (every registered gate present) plus issues for malformed or unknown entries. */
export function parseFeatureGates(entries: readonly string[]): {
  gates: Record<string, boolean>;
  issues: ConfigIssue[];
} {
  const gates = { ...FEATURE_GATE_DEFAULTS };
  const issues: ConfigIssue[] = [];
  entries.forEach((entry, i) => {
    const [gate = "", value, extra] = entry.split("=");
    const path = `featureGates[${i}]`;
    if (!(gate in FEATURE_GATE_DEFAULTS)) {
      issues.push({
        path,
        message: `unknown feature gate "${gate}" (known: ${Object.keys(FEATURE_GATE_DEFAULTS).join(", ")})`,
      });
    } else if (extra !== undefined || (value !== undefined && value !== "true" && value !== "false")) {
      issues.push({ path, message: `expected "${gate}", "${gate}=true" or "${gate}=false", got "${entry}"` });
    } else {
      gates[gate] = value !== "false";
    }
  });
  return { gates, issues };
}
