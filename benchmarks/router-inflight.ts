/**
 * `npm run bench -- router-inflight [--requests 64] [--baseline <dir>]…`: what one request holds in
 * `llmd router`'s heap while it waits for its answer. Every object a waiting request keeps alive is
 * copied by each scavenge that meets it (and promoted to the old generation by the second), so this
 * is the request path's share of the garbage collector's work under load. Each router (this
 * tree's, then each `--baseline` tree's) runs in front of two simulators that answer after 5 s:
 * after `--requests` warm-up requests, a heap snapshot of the idle router, then one with
 * `--requests` requests waiting upstream; prints the difference per waiting request (objects,
 * bytes, and the most numerous kinds).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startSimReplicas } from "../src/cli/sim-replicas.ts";
import { BENCH_MODEL, startRouterProcess } from "./router/targets.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "64" },
    baseline: { type: "string", multiple: true, default: [] },
  },
});
const REQUESTS = Number(values.requests);
const ANSWER_AFTER_MS = 5000;
const HERE = fileURLToPath(new URL("..", import.meta.url));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Node's `--heapsnapshot-signal` writes one file per signal into the process's cwd. */
async function snapshot(pid: number, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, "SIGUSR2");
  for (;;) {
    await sleep(250);
    const file = readdirSync(dir).find((f) => f.endsWith(".heapsnapshot") && !before.has(f));
    if (!file) continue;
    const path = join(dir, file);
    const size = statSync(path).size;
    await sleep(500);
    if (size > 0 && statSync(path).size === size) return path;
  }
}

/** Counts and self sizes of a snapshot's heap objects by kind (type and constructor name). */
function kinds(path: string): Map<string, { count: number; bytes: number }> {
  const snap = JSON.parse(readFileSync(path, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const out = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + typeAt!]!]!;
    if (type === "code" || type === "native" || type === "synthetic") continue;
    const name = type.includes("string") ? "" : snap.strings[snap.nodes[i + nameAt!]!]!.slice(0, 40);
    const key = `${type.includes("string") ? "string" : type} ${name}`.trim();
    const entry = out.get(key) ?? { count: 0, bytes: 0 };
    entry.count++;
    entry.bytes += snap.nodes[i + sizeAt!]!;
    out.set(key, entry);
  }
  return out;
}

async function measure(tree: string, upstreams: readonly string[]) {
  const dir = mkdtempSync(join(tmpdir(), "llmd-inflight-"));
  const { url, child } = await startRouterProcess(upstreams, tree, {
    nodeFlags: ["--heapsnapshot-signal=SIGUSR2"],
    cwd: dir,
  });
  let sent = 0;
  const wave = () =>
    Promise.all(
      Array.from({ length: REQUESTS }, () =>
        fetch(`${url}/v1/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: BENCH_MODEL, prompt: `hi ${sent++}`, max_tokens: 1 }),
        }).then((r) => r.text()),
      ),
    );
  await wave();
  const idle = kinds(await snapshot(child.pid as number, dir));
  const waiting = wave();
  await sleep(ANSWER_AFTER_MS / 5);
  const busy = kinds(await snapshot(child.pid as number, dir));
  await waiting;
  child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  const rows = [...busy].map(([kind, b]) => {
    const a = idle.get(kind) ?? { count: 0, bytes: 0 };
    return { kind, count: (b.count - a.count) / REQUESTS, bytes: (b.bytes - a.bytes) / REQUESTS };
  });
  const total = rows.reduce((t, r) => ({ count: t.count + r.count, bytes: t.bytes + r.bytes }), {
    count: 0,
    bytes: 0,
  });
  return { total, top: rows.filter((r) => r.count >= 0.5).sort((a, b) => b.count - a.count) };
}

const flags = [
  "--model",
  BENCH_MODEL,
  "--time-to-first-token",
  `${ANSWER_AFTER_MS}ms`,
  "--max-num-seqs",
  "1024",
];
const sims = await startSimReplicas({ replicas: 2, basePort: 0, stdio: "ignore", simArgs: flags });
try {
  for (const tree of [HERE, ...(values.baseline as string[])]) {
    const { total, top } = await measure(tree, sims.urls);
    console.log(
      `${tree === HERE ? "this tree" : tree}: a waiting request holds ${total.count.toFixed(0)} objects, ${total.bytes.toFixed(0)} bytes (${REQUESTS} waiting)`,
    );
    console.table(
      top
        .slice(0, 12)
        .map((r) => ({ kind: r.kind, "per request": r.count.toFixed(1), bytes: r.bytes.toFixed(0) })),
    );
  }
} finally {
  await sims.stop();
}
