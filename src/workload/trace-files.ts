/**
 * Where trace data lives: `../shared/data/traces` beside the repository root (read in place, never
 * copied), overridable with `LLMD_TRACES_DIR`. Relative trace paths in scenarios resolve here.
 */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Absolute traces directory. */
export function tracesDir(): string {
  return process.env.LLMD_TRACES_DIR ?? resolve(repoRoot, "../shared/data/traces");
}

/** Resolves a trace path: absolute, `./`-relative to cwd, else relative to `tracesDir()`. */
export function resolveTracePath(path: string): string {
  if (isAbsolute(path)) return path;
  if (path.startsWith("./") || path.startsWith("../")) return resolve(path);
  return resolve(tracesDir(), path);
}

/** Non-empty lines of a text file. */
export function readLines(path: string): string[] {
  return readFileSync(resolveTracePath(path), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
}
