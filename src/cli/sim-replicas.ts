/**
 * Child-process supervision for `llmd up`: N `llmd sim` replicas on consecutive ports, waited for
 * until healthy, and stopped together (SIGTERM, then SIGKILL after a grace period) so no
 * simulator outlives the command; if this process dies without stopping them, they exit on their own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { freePort } from "../core/free-port.ts";

/** How to start the replicas. */
export interface SimReplicaOptions {
  replicas: number;
  /** First port (replica i listens on basePort + i); 0 = any free ports. */
  basePort: number;
  /** Extra `llmd sim` flags, e.g. `["--profile", "h200-llama3-8b", "--speed", "10"]`. */
  simArgs: readonly string[];
  /** Flags of replica `i` only, after `simArgs` (e.g. its own KV-events ports). */
  replicaArgs?: (i: number) => readonly string[];
  /** Max wait for every replica's `/health`, in ms (default 30000). */
  readyTimeoutMs?: number;
  /** Where the children's output goes (default: inherited). */
  stdio?: "inherit" | "ignore";
}

/** Running replicas. */
export interface SimReplicas {
  /** `http://127.0.0.1:port` of each replica. */
  urls: string[];
  children: ChildProcess[];
  /** Stops every child (SIGTERM: each drains; SIGKILL after `graceMs`, default 5000) and waits for exits. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * The CLI entry that registers tsx itself, so a child can load TypeScript however this process was
 * started (`tsx`, `node --import tsx`, or `bin/llmd.js`, whose in-process registration children
 * would not inherit through `execArgv`).
 */
const CLI_BIN = fileURLToPath(new URL("../../bin/llmd.js", import.meta.url));

async function ports(options: SimReplicaOptions): Promise<number[]> {
  const list: number[] = [];
  for (let i = 0; i < options.replicas; i++)
    list.push(options.basePort ? options.basePort + i : await freePort());
  return list;
}

/**
 * The IPC channel is the child's lifeline: `llmd sim` exits when it closes, which the kernel does
 * even when this process is SIGKILLed and cannot stop its children itself. Each child is its own
 * process group, so a terminal's Ctrl-C reaches only this process, which drains the router before
 * it signals the simulators.
 */
function spawnSim(port: number, i: number, options: SimReplicaOptions): ChildProcess {
  const args = [
    CLI_BIN,
    "sim",
    "--port",
    String(port),
    ...options.simArgs,
    ...(options.replicaArgs?.(i) ?? []),
  ];
  return spawn(process.execPath, args, {
    stdio: ["ignore", options.stdio ?? "inherit", options.stdio ?? "inherit", "ipc"],
    detached: true,
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return once(child, "exit").then(() => {});
}

async function waitHealthy(url: string, child: ChildProcess, deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`simulator for ${url} exited early (code ${child.exitCode ?? child.signalCode})`);
    }
    const ok = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`simulator ${url} not healthy in time`);
}

async function stopAll(children: readonly ChildProcess[], graceMs: number): Promise<void> {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  const kill = setTimeout(() => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }, graceMs);
  await Promise.all(children.map(exited));
  clearTimeout(kill);
}

/** Spawns the replicas and resolves once all are healthy; on failure stops them and rejects. */
export async function startSimReplicas(options: SimReplicaOptions): Promise<SimReplicas> {
  const list = await ports(options);
  const children = list.map((port, i) => spawnSim(port, i, options));
  const urls = list.map((port) => `http://127.0.0.1:${port}`);
  const stop = (graceMs = 5000) => stopAll(children, graceMs);
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  try {
    await Promise.all(urls.map((url, i) => waitHealthy(url, children[i] as ChildProcess, deadline)));
  } catch (err) {
    await stop(1000);
    throw err;
  }
  return { urls, children, stop };
}
