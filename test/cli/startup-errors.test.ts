/**
 * A command that cannot start prints one line naming the problem (`llmd: <code>: <message>`) on
 * stderr and exits 1, with no stack trace.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { test } from "node:test";

const BIN = resolve(import.meta.dirname, "../../bin/llmd.js");

function run(...args: string[]): { status: number | null; stderr: string } {
  const out = spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", timeout: 30_000 });
  return { status: out.status, stderr: out.stderr };
}

function assertOneLine(result: { status: number | null; stderr: string }, pattern: RegExp): void {
  assert.equal(result.status, 1);
  const lines = result.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0]!, pattern);
  assert.doesNotMatch(result.stderr, /\n\s+at /);
}

test("a bad numeric flag names the flag and the value", () => {
  assertOneLine(
    run("router", "--port", "abc", "--endpoints", "http://127.0.0.1:1"),
    /^llmd: invalid_option: --port: expected an integer >= 0, got "abc"$/,
  );
  assertOneLine(run("up", "--replicas", "0"), /^llmd: invalid_option: --replicas: expected an integer >= 1/);
  assertOneLine(
    run("router", "--drain-timeout", "soon", "--endpoints", "http://127.0.0.1:1"),
    /^llmd: invalid_option: --drain-timeout: expected a duration like "30s" or a number of seconds, got "soon"$/,
  );
  assertOneLine(
    run("router", "--body-timeout", "0", "--endpoints", "http://127.0.0.1:1"),
    /^llmd: invalid_option: --body-timeout: expected a duration > 0, got "0"$/,
  );
  assertOneLine(
    run("router", "--id-prompt-bytes", "-1", "--endpoints", "http://127.0.0.1:1"),
    /^llmd: invalid_option: --id-prompt-bytes: expected an integer >= 0, got "-1"$/,
  );
});

test("an invalid config names the catalogue code and the offending path", () => {
  const file = join(tmpdir(), `llmd-bad-config-${process.pid}.yaml`);
  writeFileSync(
    file,
    "apiVersion: llm-d.ai/v1\nkind: EndpointPickerConfig\nplugins: [{type: nope-scorer}]\n",
  );
  assertOneLine(
    run("router", "--config", file, "--endpoints", "http://127.0.0.1:1", "--port", "0"),
    /^llmd: invalid_config: invalid EndpointPickerConfig: plugins\[0\]\.type: .*nope-scorer/,
  );
});

test("a missing file is one line too", () => {
  assertOneLine(
    run("router", "--config", "/nonexistent/llmd.yaml", "--endpoints", "http://127.0.0.1:1"),
    /^llmd: ENOENT: no such file or directory, open '\/nonexistent\/llmd\.yaml'$/,
  );
});
