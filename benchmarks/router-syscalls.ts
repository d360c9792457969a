/**
 * `npm run bench -- router-syscalls [--seconds 4] [--jit-warmup 15] [--concurrency 32]`: the
 * router's and the node floor's system calls per request under the router benchmark's closed
 * loop (the same two zero-latency simulators, load generator and prompts as
 * `npm run bench -- router --cases throughput`), counted with `strace -c -f` attached for the
 * measured window only, next to each one's CPU per request (user and kernel, from /proc) in an
 * untraced window just before. Shows whether a proxy's extra CPU is socket traffic (more
 * writes, reads or loop wake-ups a request) or its own JavaScript. Needs strace (ptrace
 * allowed); it slows the traced process, so only the counts of that window are read.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadWindow } from "./router/load-window.ts";
import {
  BENCH_MODEL,
  startNodeFloor,
  startRouterProcess,
  startZeroLatencySims,
  type Target,
} from "./router/targets.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "4" },
    "jit-warmup": { type: "string", default: "15" },
    concurrency: { type: "string", default: "32" },
  },
});
const SYSCALLS = ["read", "write", "writev", "epoll_pwait", "futex"] as const;

/** Runs one closed-loop window on `target`; `onWindow` runs when it starts, its result when it ends. */
async function window(target: Target, seconds: number, onWindow?: () => () => Promise<void>) {
  const job = { concurrency: Number(values.concurrency), seconds, warmupSeconds: 1 };
  const { result: r, cpu } = await loadWindow(
    target,
    { ...job, url: target.url, model: BENCH_MODEL, prompts: "unique" },
    { onMeasuring: onWindow },
  );
  const requests = Math.max(1, r.requests + r.errors);
  return { requests, user: (cpu.user * 1e6) / requests, system: (cpu.system * 1e6) / requests };
}

/** `strace -c -f -p pid` until the returned stop; its summary file. */
function strace(pid: number, out: string): () => Promise<void> {
  const child: ChildProcess = spawn("strace", ["-c", "-f", "-p", String(pid), "-o", out], {
    stdio: "ignore",
  });
  return async () => {
    child.kill("SIGINT");
    await once(child, "exit");
  };
}

/** Calls per syscall name from an `strace -c` summary. */
function calls(summary: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of summary.split("\n")) {
    const fields = line.trim().split(/\s+/);
    const name = fields.at(-1) ?? "";
    // % time, seconds, usecs/call, calls, [errors], syscall
    if (fields.length >= 5 && /^\d/.test(fields[0] ?? "")) out.set(name, Number(fields[3]));
  }
  return out;
}

if (spawnSync("strace", ["-V"]).status !== 0) {
  console.log("strace not installed (apt-get install -y strace)");
  process.exit(2);
}
const sims = await startZeroLatencySims();
const router = await startRouterProcess(sims.urls);
const floor = await startNodeFloor(sims.urls);
const targets: Target[] = [
  { name: "llmd router", url: router.url, pid: router.child.pid ?? 0 },
  { name: "node floor (bare proxy)", url: floor.url, pid: floor.child.pid ?? 0 },
];
const seconds = Number(values.seconds);
for (const target of targets) await window(target, Number(values["jit-warmup"]));
const rows: Record<string, string | number>[] = [];
for (const target of targets) {
  const cpu = await window(target, seconds);
  const out = join(tmpdir(), `llmd-syscalls-${target.pid}.txt`);
  const traced = await window(target, seconds, () => strace(target.pid, out));
  const counts = calls(readFileSync(out, "utf8"));
  const row: Record<string, string | number> = {
    target: target.name,
    "CPU µs/req": Math.round(cpu.user + cpu.system),
    "of it kernel": Math.round(cpu.system),
  };
  for (const name of SYSCALLS) row[`${name}/req`] = ((counts.get(name) ?? 0) / traced.requests).toFixed(2);
  rows.push(row);
}
console.log(
  `closed loop (${values.concurrency}), ${seconds} s per window; syscalls per request under strace -c -f`,
);
console.table(rows);
router.child.kill("SIGTERM");
floor.child.kill();
await sims.stop();
process.exit(0);
