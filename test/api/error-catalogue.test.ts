/**
 * The error catalogue and docs/errors.md agree row for row (code, status, OpenAI type, dropped
 * reason, Retry-After), and every catalogued code is raised somewhere in src/.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { sourceFiles } from "../architecture/source-files.ts";
import {
  ERROR_CATALOGUE,
  type ErrorSpec,
  LlmdError,
  openAIType,
  toOpenAIError,
} from "../../src/api/errors.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const entries = Object.entries(ERROR_CATALOGUE) as [keyof typeof ERROR_CATALOGUE, ErrorSpec][];

/** The docs row a catalogue entry must have. */
function docsRow(code: string, spec: ErrorSpec): string {
  const cells = [
    `\`${code}\``,
    String(spec.status),
    `\`${openAIType(spec.status)}\``,
    spec.droppedReason ? `\`${spec.droppedReason}\`` : "",
    spec.retryAfterSeconds === undefined ? "" : `${spec.retryAfterSeconds} s`,
    spec.condition,
  ];
  return `| ${cells.join(" | ")} |`;
}

test("docs/errors.md lists every catalogued code with its status, type, dropped reason and Retry-After", () => {
  const rows = readFileSync(join(ROOT, "docs/errors.md"), "utf8")
    .split("\n")
    .filter((line) => line.startsWith("| `"));
  assert.deepEqual(
    rows,
    entries.map(([code, spec]) => docsRow(code, spec)),
  );
});

// Catalogue keys are bare identifiers, so a quoted code is a place that raises it.
test("every catalogued code is raised somewhere in src/ (no dead codes)", () => {
  const text = sourceFiles(join(ROOT, "src"))
    .map((f) => readFileSync(f, "utf8"))
    .join("\n");
  const unused = entries.map(([code]) => code).filter((code) => !text.includes(`"${code}"`));
  assert.deepEqual(unused, []);
});

test("an error takes its status, type, dropped reason and Retry-After from the catalogue", () => {
  const shed = toOpenAIError(new LlmdError("shed", "shed"));
  assert.equal(shed.status, 429);
  assert.equal(shed.body.error.type, "rate_limit_error");
  assert.equal(shed.body.error.code, "shed");
  assert.deepEqual(shed.headers, {
    "x-llm-d-request-dropped-reason": "rejected-saturated",
    "retry-after": "1",
  });
  const missing = toOpenAIError(new LlmdError("model_not_found", "nope", { param: "model" }));
  assert.deepEqual(
    [missing.status, missing.body.error.type, missing.body.error.param],
    [404, "not_found_error", "model"],
  );
  assert.deepEqual(missing.headers, {});
  const bug = toOpenAIError(new Error("boom"));
  assert.deepEqual(
    [bug.status, bug.body.error.code, bug.body.error.type],
    [500, "internal_error", "server_error"],
  );
});
