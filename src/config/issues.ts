/**
 * Configuration problems as values: each names the path in the config (`plugins[3].parameters.x`)
 * and says what was expected and what was found. `loadConfig` throws them as one ConfigError.
 */
import type { z } from "zod";
import { LlmdError } from "../api/errors.ts";

/** One problem in a config document. */
export interface ConfigIssue {
  /** Dotted path with indices, e.g. `schedulingProfiles[0].plugins[2].pluginRef`; "" for the root. */
  path: string;
  message: string;
  /** Set when the problem is an llm-d plugin type llmd does not implement (src/config/planned-plugins.ts). */
  unimplementedType?: string;
}

/** Renders a path array as `a[0].b`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** Joins a prefix path and a relative one. */
export function joinPath(prefix: string, path: readonly PropertyKey[]): string {
  const rest = formatPath(path);
  if (!prefix) return rest;
  if (!rest) return prefix;
  return rest.startsWith("[") ? prefix + rest : `${prefix}.${rest}`;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Zod issues (parsed with `reportInput: true`) as config issues under `prefix`. */
export function fromZodIssues(prefix: string, issues: readonly z.core.$ZodIssue[]): ConfigIssue[] {
  return issues.map((issue) => {
    const path = joinPath(prefix, issue.path);
    if (issue.code === "unrecognized_keys") {
      return { path, message: `unknown field(s) ${issue.keys.map((k) => `"${k}"`).join(", ")}` };
    }
    if (issue.code === "invalid_union" || issue.code === "custom") return { path, message: issue.message };
    // Zod's stock messages read "Too small: expected number to be >=0"; keep the "expected…" part.
    const message = issue.message.replace(/^(Too small|Too big|Invalid input|Invalid option): /, "");
    return { path, message: `${message}, got ${describe(issue.input)}` };
  });
}

/** Renders issues one per line as `path: message`. */
export function formatIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("\n");
}

/** Thrown by `loadConfig` when a config cannot be used; `issues` lists every problem found. */
export class ConfigError extends LlmdError {
  constructor(readonly issues: readonly ConfigIssue[]) {
    super("invalid_config", `invalid EndpointPickerConfig:\n${formatIssues(issues)}`);
    this.name = "ConfigError";
  }
}
