/**
 * CI smoke of `npm run bench -- router` at its smallest size: it must start every target, push
 * requests through each without errors and print every table. Asserts structure, never timings.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const BENCH = fileURLToPath(new URL("../../benchmarks/router.ts", import.meta.url));
/** This checkout stands in for the `--baseline` source tree (an earlier commit's, in a real run). */
const BASELINE = fileURLToPath(new URL("../..", import.meta.url));
const ARGS = [
  ...["--seconds", "0.4", "--warmup", "0.2", "--rates", "50", "--concurrency", "2"],
  ...["--prompt-kb", "16", "--large-rate", "10", "--streams", "2", "--stream-tokens", "3"],
  ...["--split-tokens", "1"],
  ...["--baseline", BASELINE, "--jit-warmup", "0.2"],
];

/** `[target, ok, errors]` of every open-loop row of a console.table. */
function openLoopRows(text: string): [string, number, number][] {
  const rows: [string, number, number][] = [];
  for (const match of text.matchAll(/│ \d+\s+│ '([^']+)'\s+│ 50\s+│ (\d+)\s+│ (\d+)\s+│/g))
    rows.push([match[1] as string, Number(match[2]), Number(match[3])]);
  return rows;
}

describe("bench router (smoke)", () => {
  it("measures every target without errors and prints every table", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", BENCH, ...ARGS], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const [code] = await once(child, "exit");
    assert.equal(code, 0, out);
    assert.match(out, /\(a\) open loop at fixed rates/);
    assert.match(out, /\(b\) closed loop, 2 concurrent/);
    assert.match(out, /\(c\) 16 KB prompts, open loop at 10 req\/s/);
    assert.match(out, /\(d\) 2 concurrent streams of 3 tokens.*split by a second run of 1-token streams/);
    assert.match(out, /µs\/stream\s+│ µs\/token past it/);
    assert.match(out, /against the targets/);
    const rows = openLoopRows(out);
    const names = rows.map(([name]) => name);
    for (const expected of [
      "direct (one sim)",
      "llmd router",
      "node floor (bare proxy)",
      "node net pipe (TCP, no HTTP)",
      "llmd router (baseline)",
    ])
      assert.ok(names.includes(expected), `${expected} in ${names}`);
    for (const [name, ok, errors] of rows) {
      assert.ok(ok > 0, `${name} answered nothing`);
      assert.equal(errors, 0, `${name} had errors`);
    }
  });
});

describe("bench router-survival (smoke)", () => {
  it("reads the router's scavenges under load and prints what survived them", async () => {
    const script = fileURLToPath(new URL("../../benchmarks/router-survival.ts", import.meta.url));
    const child = spawn(
      process.execPath,
      ["--import", "tsx", script, "--seconds", "2", "--warmup", "0.5", "--concurrency", "4"],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const [code] = await once(child, "exit");
    assert.equal(code, 0, out);
    const row = /│ 'this tree'\s+│ (\d+)\s+│ (\d+)\s+│ (\d+)\s+│ ([\d.]+)\s+│/.exec(out);
    assert.ok(row, out);
    const [, reqPerSecond, , scavenges, survivedPct] = row.map(Number);
    assert.ok((reqPerSecond as number) > 0, out);
    assert.ok((scavenges as number) > 0, `no scavenge in the window: ${out}`);
    assert.ok((survivedPct as number) >= 0 && (survivedPct as number) <= 100, out);
  });
});
