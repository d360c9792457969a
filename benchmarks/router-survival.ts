/**
 * `npm run bench -- router-survival [--seconds 12] [--warmup 5] [--concurrency 32] [--baseline <dir>]…`:
 * what survives the router's young-generation collections in the closed loop of `bench router`.
 * Each router (this tree's, then each `--baseline` tree's, one at a time) runs under node's
 * `--trace-gc-nvp` in front of two zero-latency simulators; prints its CPU per request and, over
 * the measured window, the share of the young generation each scavenge found alive (median and
 * p90) and the scavenges' pauses. A request's objects die when it ends, so what survives is what
 * is in flight (about 1%) unless something old still points at ended requests.
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { percentile } from "../src/measure/percentile.ts";
import { loadWindow } from "./router/load-window.ts";
import { BENCH_MODEL, type Listener, measureEachTree } from "./router/targets.ts";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "12" },
    warmup: { type: "string", default: "5" },
    concurrency: { type: "string", default: "32" },
    baseline: { type: "string", multiple: true, default: [] },
  },
});
const HERE = fileURLToPath(new URL("..", import.meta.url));

/** The main isolate's scavenges in `trace` (`--trace-gc-nvp` lines): survival % and pause ms. */
function scavenges(trace: string): { survivedPct: number; pauseMs: number }[] {
  const mainIsolate = /^\[\d+:(0x[0-9a-f]+)\]/m.exec(trace)?.[1] ?? "";
  return trace
    .split("\n")
    .filter((line) => line.includes(mainIsolate) && line.includes(" gc=s "))
    .map((line) => ({
      survivedPct: Number(/new_space_survive_rate_=([\d.]+)/.exec(line)?.[1] ?? Number.NaN),
      pauseMs: Number(/ pause=([\d.]+)/.exec(line)?.[1] ?? Number.NaN),
    }));
}

async function measure(router: Listener, tree: string): Promise<Record<string, string | number>> {
  const target = { name: tree, url: router.url, pid: router.child.pid ?? 0 };
  let from = 0;
  const job = {
    url: router.url,
    model: BENCH_MODEL,
    prompts: "unique" as const,
    concurrency: Number(values.concurrency),
    seconds: Number(values.seconds),
    warmupSeconds: Number(values.warmup),
  };
  const { result, cpu } = await loadWindow(target, job, {
    onMeasuring: () => {
      from = router.output().length;
      return undefined;
    },
  });
  const gcs = scavenges(router.output().slice(from));
  const survived = gcs.map((g) => g.survivedPct);
  const pauses = gcs.map((g) => g.pauseMs);
  return {
    router: tree === HERE ? "this tree" : tree,
    "req/s": Math.round(result.requests / job.seconds),
    "CPU µs/req": Math.round(((cpu.user + cpu.system) * 1e6) / Math.max(1, result.requests)),
    scavenges: gcs.length,
    "survived % p50": percentile(survived, 50),
    "survived % p90": percentile(survived, 90),
    "pause ms p50": percentile(pauses, 50),
    "pause ms p90": percentile(pauses, 90),
  };
}

const rows = await measureEachTree([HERE, ...(values.baseline as string[])], ["--trace-gc-nvp"], measure);
console.log(
  `\nclosed loop of ${values.concurrency} over ${values.seconds} s (after ${values.warmup} s untimed); the router's scavenges in that window`,
);
console.table(rows);
