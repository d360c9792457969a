/** `llmd simulate` names the tokenizer its fleet counted with, in the table output and the JSON. */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const BIN = fileURLToPath(new URL("../../bin/llmd.js", import.meta.url));
const SMOKE = fileURLToPath(new URL("../../examples/scenarios/smoke.yaml", import.meta.url));

test("the simulate report says which tokenizer it used", async () => {
  const json = join(mkdtempSync(join(tmpdir(), "llmd-simulate-")), "runs.json");
  const { stdout } = await promisify(execFile)(process.execPath, [
    BIN,
    "simulate",
    SMOKE,
    "--quiet",
    "--no-html",
    "--json",
    json,
  ]);
  assert.match(stdout, /^tokenizer: char4 \(the stand-in, 4 characters per token\)$/m);
  const rows = JSON.parse(readFileSync(json, "utf8")) as { tokenizer: string }[];
  assert.ok(rows.length > 0);
  for (const row of rows) assert.equal(row.tokenizer, "char4");
});
