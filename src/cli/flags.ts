/** Checked numeric flags and the one-line report of a startup failure. */
import { LlmdError } from "../api/errors.ts";
import { parseDurationMs } from "../core/units.ts";

/** Bounds of a numeric flag. */
export interface NumberBounds {
  min?: number;
  integer?: boolean;
}

/** `value` of flag `name` as a number within `bounds`; an `invalid_option` error otherwise. */
export function numberFlag(name: string, value: string, bounds: NumberBounds = {}): number {
  const n = Number(value);
  const min = bounds.min ?? 0;
  const ok =
    value.trim() !== "" && Number.isFinite(n) && n >= min && (!bounds.integer || Number.isInteger(n));
  if (ok) return n;
  const kind = bounds.integer ? "an integer" : "a number";
  throw new LlmdError(
    "invalid_option",
    `--${name}: expected ${kind} >= ${min}, got ${JSON.stringify(value)}`,
  );
}

/** `value` of flag `name` as milliseconds: a Go duration ("30s", "1m30s", "500ms") or seconds ("30"). */
export function durationFlag(name: string, value: string): number {
  const text = value.trim();
  const ms = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : parseDurationMs(text);
  if (ms !== undefined && Number.isFinite(ms)) return ms;
  throw new LlmdError(
    "invalid_option",
    `--${name}: expected a duration like "30s" or a number of seconds, got ${JSON.stringify(value)}`,
  );
}

/** The line a failed command prints: `llmd: <code>: <message>`, multi-line messages joined by `; `. */
export function startupFailureLine(err: unknown): string {
  const text = (err instanceof Error ? err.message : String(err)).trim();
  const message = text
    .replace(/:\s*\n+/, ": ")
    .split(/\n+/)
    .join("; ");
  return err instanceof LlmdError ? `llmd: ${err.code}: ${message}` : `llmd: ${message}`;
}
