/**
 * `npm run bench -- router-gc [--requests 150] [--prompt-kb 800] [--rate 5] [--jit-warmup 15]
 * [--baseline <dir>]…`: the garbage collector's work per large-prompt request in `llmd router`.
 * Each router (this tree's, then each `--baseline` tree's, one at a time) runs under node's
 * `--trace-gc` in front of two zero-latency simulators, serves `--jit-warmup` seconds of the
 * closed-loop short prompts `bench router` warms with, then `--requests` prompts padded to
 * `--prompt-kb` at `--rate` req/s (the large case of `bench router`). Prints, per router, its CPU
 * per request and the main thread's scavenges and mark-compacts per request with their pauses, all
 * over the measured window, and what started the mark-compacts' marking.
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { loadWindow } from "./router/load-window.ts";
import { BENCH_MODEL, type Listener, measureEachTree } from "./router/targets.ts";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "150" },
    "prompt-kb": { type: "string", default: "800" },
    rate: { type: "string", default: "5" },
    "jit-warmup": { type: "string", default: "15" },
    baseline: { type: "string", multiple: true, default: [] },
  },
});
const HERE = fileURLToPath(new URL("..", import.meta.url));

/** One main-thread collection of a `--trace-gc` line. */
interface Collection {
  kind: "scavenge" | "mark-compact";
  pauseMs: number;
  /** Main-thread incremental marking steps before a mark-compact's pause. */
  markingMs: number;
}

/** The main isolate's collections and marking starts in `trace` (the first isolate printed is the main one). */
function collections(trace: string, mainIsolate: string): { gcs: Collection[]; starts: Map<string, number> } {
  const gcs: Collection[] = [];
  const starts = new Map<string, number>();
  for (const line of trace.split("\n")) {
    if (!line.includes(mainIsolate)) continue;
    const start = /\[IncrementalMarking\] Start \(([^)]*)\)/.exec(line);
    if (start?.[1]) starts.set(start[1], (starts.get(start[1]) ?? 0) + 1);
    const gc = /ms: (Scavenge|Mark-Compact)[^,]*, ([\d.]+) \//.exec(line);
    if (!gc) continue;
    const markingMs = Number(/\+ ([\d.]+) ms in \d+ steps/.exec(line)?.[1] ?? 0);
    gcs.push({ kind: gc[1] === "Scavenge" ? "scavenge" : "mark-compact", pauseMs: Number(gc[2]), markingMs });
  }
  return { gcs, starts };
}

async function measure(router: Listener, tree: string): Promise<Record<string, string | number>> {
  const target = { name: tree, url: router.url, pid: router.child.pid ?? 0 };
  const base = { url: router.url, model: BENCH_MODEL, prompts: "unique" as const };
  const warmSeconds = Number(values["jit-warmup"]);
  if (warmSeconds > 0)
    await loadWindow(target, { ...base, concurrency: 32, seconds: warmSeconds, warmupSeconds: 0 });
  let from = 0;
  const rate = Number(values.rate);
  const job = {
    ...base,
    rate,
    seconds: Number(values.requests) / rate,
    warmupSeconds: 1,
    promptBytes: Number(values["prompt-kb"]) * 1024,
  };
  const { result, cpu } = await loadWindow(target, job, {
    onMeasuring: () => {
      from = router.output().length;
      return undefined;
    },
  });
  const all = router.output();
  const mainIsolate = /^\[\d+:(0x[0-9a-f]+)\]/m.exec(all)?.[1] ?? "";
  const { gcs, starts } = collections(all.slice(from), mainIsolate);
  const n = Math.max(1, result.requests + result.errors);
  const per = (kind: Collection["kind"], pick: (c: Collection) => number) =>
    (gcs.filter((c) => c.kind === kind).reduce((sum, c) => sum + pick(c), 0) / n).toFixed(2);
  return {
    router: tree === HERE ? "this tree" : tree,
    requests: result.requests,
    errors: result.errors,
    "p50 ms": result.p50.toFixed(2),
    "CPU ms/req": (((cpu.user + cpu.system) * 1000) / n).toFixed(2),
    "scavenges/req": per("scavenge", () => 1),
    "scavenge pause ms/req": per("scavenge", (c) => c.pauseMs),
    "mark-compacts/req": per("mark-compact", () => 1),
    "mark-compact ms/req (pause + marking steps)": per("mark-compact", (c) => c.pauseMs + c.markingMs),
    "marking started by": [...starts].map(([why, count]) => `${why} ×${count}`).join(", ") || "—",
  };
}

const trees = [HERE, ...(values.baseline as string[])];
const rows = await measureEachTree(trees, ["--trace-gc", "--trace-incremental-marking"], measure);
console.log(
  `\n${values.requests} prompts of ${values["prompt-kb"]} KB at ${values.rate} req/s after ${values["jit-warmup"]} s of closed loop; main thread's collections over the measured window`,
);
console.table(rows);
