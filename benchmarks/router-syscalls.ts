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
import { type ChildProcess, fork, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startSimReplicas } from "../src/cli/sim-replicas.ts";
import type { LoadJob, LoadResult } from "./router/load.ts";
import { cpuTimes, startNodeFloor, startRouterProcess, type Target } from "./router/targets.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "4" },
    "jit-warmup": { type: "string", default: "15" },
    concurrency: { type: "string", default: "32" },
  },
});
const MODEL = "bench-model";
const LOAD_WORKER = fileURLToPath(new URL("./router/load.ts", import.meta.url));
const SYSCALLS = ["read", "write", "writev", "epoll_pwait", "futex"] as const;

/** Runs one closed-loop window on `target`; `onWindow` runs when it starts, its result when it ends. */
async function window(target: Target, seconds: number, onWindow?: () => () => Promise<void>) {
  const worker = fork(LOAD_WORKER, [], { execArgv: ["--import", "tsx"], stdio: "inherit" });
  let start = cpuTimes(target.pid);
  let stop: (() => Promise<void>) | undefined;
  const result = new Promise<LoadResult>((resolve) => {
    worker.on("message", (msg: { measuring?: boolean } | LoadResult) => {
      if (!("measuring" in msg)) return resolve(msg as LoadResult);
      start = cpuTimes(target.pid);
      stop = onWindow?.();
    });
  });
  const job = { concurrency: Number(values.concurrency), seconds, warmupSeconds: 1 };
  worker.send({ ...job, url: target.url, model: MODEL, prompts: "unique" } satisfies LoadJob);
  const r = await result;
  const end = cpuTimes(target.pid);
  await stop?.();
  worker.kill();
  const requests = Math.max(1, r.requests + r.errors);
  const user = ((end.user - start.user) * 1e6) / requests;
  const system = ((end.system - start.system) * 1e6) / requests;
  return { requests, user, system };
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
const flags = [
  ...["--model", MODEL, "--time-to-first-token", "0ms", "--inter-token-latency", "20ms"],
  ...["--max-model-len", "1048576", "--max-num-seqs", "1024", "--host", "127.0.0.1"],
];
const sims = await startSimReplicas({ replicas: 2, basePort: 0, stdio: "ignore", simArgs: flags });
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
