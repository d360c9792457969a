/** llm-d's metric spec syntax: `metric_name` or `metric_name{label=value,label2="value 2"}`. */
import { badRequest } from "../api/errors.ts";

/** A parsed spec: the metric family name plus exact-match label filters. */
export interface MetricSpec {
  readonly name: string;
  readonly matchers: readonly (readonly [string, string])[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * Parses a spec. Label values may be bare (`status=waiting`) or double-quoted; throws a 400
 * `LlmdError` naming the spec when it is malformed.
 */
export function parseMetricSpec(spec: string): MetricSpec {
  const trimmed = spec.trim();
  const brace = trimmed.indexOf("{");
  const name = brace < 0 ? trimmed : trimmed.slice(0, brace).trim();
  if (!METRIC_NAME.test(name)) throw invalid(spec, "bad metric name");
  if (brace < 0) return { name, matchers: [] };
  if (!trimmed.endsWith("}")) throw invalid(spec, "missing closing brace");
  return { name, matchers: parseMatchers(trimmed.slice(brace + 1, -1), spec) };
}

function parseMatchers(body: string, spec: string): [string, string][] {
  const matchers: [string, string][] = [];
  const pair = /\s*([^=\s,]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,"]*))\s*(?:,|$)/y;
  let match: RegExpExecArray | null;
  while (pair.lastIndex < body.length && (match = pair.exec(body)) !== null) {
    const label = match[1]!;
    if (!LABEL_NAME.test(label)) throw invalid(spec, `bad label name ${label}`);
    const value = match[2] !== undefined ? match[2].replace(/\\(.)/g, "$1") : match[3]!.trim();
    matchers.push([label, value]);
  }
  if (pair.lastIndex < body.length && body.slice(pair.lastIndex).trim() !== "") {
    throw invalid(spec, "bad label matcher");
  }
  return matchers;
}

function invalid(spec: string, why: string) {
  return badRequest(`invalid metric spec ${JSON.stringify(spec)}: ${why}`, "metricSpec");
}
