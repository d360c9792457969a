/**
 * Processes the router benchmark measures: zero-latency `llmd sim` replicas, `llmd router` in
 * front of them, nginx (one process, round-robin, keep-alive upstreams) when installed, and the
 * CPU time each process spends (from /proc, so the result holds on a shared machine).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startSimReplicas } from "../../src/cli/sim-replicas.ts";
import { freePort } from "../../src/core/free-port.ts";

/** The model the benchmarks' simulators serve. */
export const BENCH_MODEL = "bench-model";

/**
 * The two loopback `llmd sim` replicas the router benchmarks proxy to: no prefill time, so only
 * proxy cost shows; one token every 20 ms for streams (a `max_tokens: 1` request ends at its
 * first token, so this touches no other case); a context that takes the large prompts.
 */
export function startZeroLatencySims(): ReturnType<typeof startSimReplicas> {
  const simArgs = [
    ...["--model", BENCH_MODEL, "--time-to-first-token", "0ms", "--inter-token-latency", "20ms"],
    ...["--max-model-len", "1048576", "--max-num-seqs", "1024", "--host", "127.0.0.1"],
  ];
  return startSimReplicas({ replicas: 2, basePort: 0, stdio: "ignore", simArgs });
}

/** A server under test. */
export interface Target {
  name: string;
  url: string;
  /** Process whose CPU time is charged to the target. */
  pid: number;
}

const CLI_MAIN = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
const NODE_FLOOR = fileURLToPath(new URL("./node-floor.ts", import.meta.url));
const NET_PIPE = fileURLToPath(new URL("./net-pipe.ts", import.meta.url));

/** User and system (kernel) CPU seconds of `pid` so far, NaN where /proc is unavailable. */
export function cpuTimes(pid: number): { user: number; system: number } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 14 and 15 of stat(5) (utime, stime), counted after the command name.
    return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
  } catch {
    return { user: Number.NaN, system: Number.NaN };
  }
}

/** User + system CPU seconds of `pid` so far, or NaN where /proc is unavailable. */
export function cpuSeconds(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

const TSX_LOADER = import.meta.resolve("tsx");

/** A started server script: its URL, its process and everything it printed to stdout so far. */
export interface Listener {
  url: string;
  child: ChildProcess;
  output(): string;
}

/** Options of a started script: node flags before the script, and its working directory. */
export interface ListenerOptions {
  nodeFlags?: readonly string[];
  cwd?: string;
}

/**
 * Starts a TypeScript server script that prints `listening on <url>`; resolves with its URL. tsx
 * is loaded from this tree by path, so the script runs from any `cwd`.
 */
export async function startListener(
  args: readonly string[],
  options: ListenerOptions = {},
): Promise<Listener> {
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), "--import", TSX_LOADER, ...args], {
    cwd: options.cwd,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let seen = "";
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(seen);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", () => reject(new Error(`process exited: ${seen}`)));
  });
  return { url, child, output: () => seen };
}

/**
 * Starts `llmd router` (default config) over `upstreams`; resolves once it listens. `checkout`
 * runs the router of another source tree instead of this one (an earlier commit's, for a
 * before/after in one run).
 */
export function startRouterProcess(
  upstreams: readonly string[],
  checkout?: string,
  options: ListenerOptions = {},
): Promise<Listener> {
  const flags = ["--port", "0", "--host", "127.0.0.1", "--endpoints", upstreams.join(",")];
  const main = checkout === undefined ? CLI_MAIN : join(checkout, "src/cli/main.ts");
  return startListener([main, "router", ...flags], options);
}

/**
 * Measures each of `trees` (source checkouts, this one's root among them) in turn over one pair of
 * zero-latency simulators: its `llmd router` is started with `flags` (run from the tree), handed to
 * `measure`, and stopped after it. Returns the rows in the trees' order.
 */
export async function measureEachTree<Row>(
  trees: readonly string[],
  flags: readonly string[],
  measure: (router: Listener, tree: string) => Promise<Row>,
): Promise<Row[]> {
  const sims = await startZeroLatencySims();
  try {
    const rows: Row[] = [];
    for (const tree of trees) {
      process.stderr.write(`measuring the router of ${tree}\n`);
      const router = await startRouterProcess(sims.urls, tree, { nodeFlags: flags, cwd: tree });
      try {
        rows.push(await measure(router, tree));
      } finally {
        router.child.kill("SIGTERM");
        if (router.child.exitCode === null) await once(router.child, "exit");
      }
    }
    return rows;
  } finally {
    await sims.stop();
  }
}

/** Starts the bare Node.js proxy (node-floor.ts) over `upstreams`. */
export function startNodeFloor(upstreams: readonly string[]): Promise<{ url: string; child: ChildProcess }> {
  return startListener([NODE_FLOOR, ...upstreams]);
}

/** Starts the TCP pipe (net-pipe.ts, no HTTP) over `upstreams`: Node's socket layer alone. */
export function startNetPipe(upstreams: readonly string[]): Promise<{ url: string; child: ChildProcess }> {
  return startListener([NET_PIPE, ...upstreams]);
}

async function waitReachable(url: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} not reachable`);
}

/** nginx as one process (`master_process off`), or undefined when it is not installed. */
export async function startNginx(
  upstreams: readonly string[],
): Promise<{ url: string; child: ChildProcess } | undefined> {
  const binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => existsSync(p));
  if (!binary) return undefined;
  const dir = mkdtempSync(join(tmpdir(), "llmd-nginx-"));
  const port = await freePort();
  const servers = upstreams.map((u) => `server ${new URL(u).host};`).join(" ");
  writeFileSync(
    join(dir, "nginx.conf"),
    `daemon off; master_process off; worker_processes 1; pid ${dir}/nginx.pid; error_log ${dir}/error.log;
events { worker_connections 4096; }
http { access_log off; upstream sims { ${servers} keepalive 256; }
  server { listen 127.0.0.1:${port}; location / { proxy_pass http://sims; proxy_http_version 1.1;
    proxy_set_header Connection ""; proxy_buffering off; } } }`,
  );
  const child = spawn(binary, ["-p", dir, "-c", join(dir, "nginx.conf")], { stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  await waitReachable(url);
  return { url, child };
}

/** `nginx -v` output (e.g. `nginx/1.22.1`), or "absent". */
export function nginxVersion(): string {
  const binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => existsSync(p));
  if (!binary) return "absent";
  return spawnSync(binary, ["-v"], { encoding: "utf8" }).stderr.trim().replace("nginx version: ", "");
}
