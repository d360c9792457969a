/**
 * Precise against approximate prefix routing live (issue #16): `llmd router` with
 * examples/configs/precise.yaml, then with examples/configs/default.yaml, in front of `llmd sim`
 * processes that publish their KV events over ZeroMQ, on loopback, replaying Claude Code (Weka)
 * sessions with `llmd bench`'s load generator, once with the sims' full KV cache (below capacity)
 * and once with a small one (above). Prints captured reuse (the sims' `cached_tokens` against the
 * ideal cache), TTFT p50/p99 and how stale a subscriber's view of evictions is.
 *
 *   npm run bench -- precise-vs-approx-live [--replicas 4] [--sessions 12] [--duration 400]
 *     [--warmup 100] [--time-scale 5] [--kv-blocks 120000,40000] [--routers 1] [--fold 1] [--records dir]
 *
 * The sims run the h200-llama3-8b profile `--time-scale` times faster than wall time, and the
 * client shrinks think times by the same factor, so times print in engine (workload) seconds.
 * `--kv-blocks` lists the sims' GPU KV sizes in 16-token blocks (0: the profile's). The sims stand
 * for the data-parallel ranks of one pod (rank r publishes on `socketPort + r`), since pods on one
 * host cannot share port 5557. Staleness: for every block a sim removed, the time from the sim
 * publishing the batch to this process's own ZeroMQ subscriber decoding it (the router's
 * subscriber runs the same sockets and decoder in its own process). `--records dir` writes each
 * run's requests as JSON Lines (`<policy>-<kv blocks>[-r<routers>].jsonl`, `llmd bench --records`'
 * format). `--routers 1,2` also runs each policy behind two `llmd router` processes, the client
 * sending requests to them in turn (active-active behind a balancer without affinity): each
 * precise router subscribes to every sim, each approximate one knows only what it routed.
 */
import { once } from "node:events";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Subscriber } from "zeromq";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { startSimReplicas } from "../src/cli/sim-replicas.ts";
import { freePortRange } from "../src/core/free-port.ts";
import { decodeBatch } from "../src/kv-events/decode.ts";
import { runLive, scenarioReplay } from "../src/load/load-generator.ts";
import { summarize } from "../src/measure/summary.ts";
import { loadScenario } from "../src/workload/scenario.ts";
import { startListener } from "./router/targets.ts";

const { values } = parseArgs({
  options: {
    replicas: { type: "string", default: "4" },
    sessions: { type: "string", default: "12" },
    duration: { type: "string", default: "400" },
    warmup: { type: "string", default: "100" },
    "time-scale": { type: "string", default: "5" },
    "kv-blocks": { type: "string", default: "120000,40000" },
    routers: { type: "string", default: "1" },
    fold: { type: "string", default: "1" },
    records: { type: "string" },
  },
});
const replicas = Number(values.replicas);
const timeScale = Number(values["time-scale"]);
const durationS = Number(values.duration);
const warmupS = Number(values.warmup);
const BLOCK_TOKENS = 16;

const root = fileURLToPath(new URL("..", import.meta.url));
const CLI_MAIN = join(root, "src/cli/main.ts");
const POLICIES = { precise: "examples/configs/precise.yaml", approx: "examples/configs/default.yaml" };

const scenario = loadScenario(join(root, "examples/scenarios/weka-16.yaml"), [
  `durationS=${durationS}`,
  `workload.sessions=${values.sessions}`,
  `workload.fold={k: 3, include: [${values.fold}]}`,
]);

/** The KV-events config of sim rank `r` (vLLM's JSON), publishing on `socketPort + r`. */
function kvEventsFlag(socketPort: number, replayPort: number, r: number): string[] {
  const config = {
    enable_kv_cache_events: true,
    publisher: "zmq",
    endpoint: `tcp://*:${socketPort + r}`,
    replay_endpoint: `tcp://*:${replayPort + r}`,
  };
  return ["--kv-events-config", JSON.stringify(config)];
}

/** `path` with the precise producer pointed at the sims' publishers (other configs unchanged). */
function routerConfig(path: string, socketPort: number, replayPort: number, dir: string): string {
  const config = parseYaml(readFileSync(join(root, path), "utf8"));
  for (const plugin of config.plugins)
    if (plugin.type === "precise-prefix-cache-producer")
      plugin.parameters.kvEventsConfig = { podDiscoveryConfig: { socketPort, replaySocketPort: replayPort } };
  const out = join(dir, "router.yaml");
  writeFileSync(out, stringifyYaml(config));
  return out;
}

/** Removed blocks' publish → decode lag, ms, from this process's own SUB sockets on the sims. */
class StalenessProbe {
  private readonly sockets: Subscriber[] = [];
  private readonly lags: { ms: number; blocks: number }[] = [];

  constructor(socketPort: number) {
    for (let r = 0; r < replicas; r++) {
      const socket = new Subscriber({ linger: 0 });
      socket.connect(`tcp://127.0.0.1:${socketPort + r}`);
      socket.subscribe("kv@");
      this.sockets.push(socket);
      void this.read(socket);
    }
  }

  private async read(socket: Subscriber): Promise<void> {
    try {
      for await (const [, , payload] of socket) {
        const batch = decodeBatch(payload!);
        let blocks = 0;
        for (const e of batch.events) if (e.type === "BlockRemoved") blocks += e.blockHashes.length;
        if (blocks > 0) this.lags.push({ ms: Date.now() - batch.ts * 1000, blocks });
      }
    } catch {
      // closed
    }
  }

  /** Nearest-rank percentile over removed blocks (NaN when nothing was removed). */
  percentile(p: number): number {
    const sorted = [...this.lags].sort((a, b) => a.ms - b.ms);
    const total = sorted.reduce((n, l) => n + l.blocks, 0);
    let seen = 0;
    for (const l of sorted) if ((seen += l.blocks) >= Math.max(1, Math.ceil((p / 100) * total))) return l.ms;
    return Number.NaN;
  }

  close(): void {
    for (const socket of this.sockets) socket.close();
  }
}

/** One run: fresh sims with `kvBlocks` of KV, `routers` routers with `policy`, the sessions replayed. */
async function run(policy: keyof typeof POLICIES, kvBlocks: number, routers: number) {
  const dir = mkdtempSync(join(tmpdir(), "llmd-pva-"));
  const socketPort = await freePortRange(replicas);
  const replayPort = await freePortRange(replicas);
  const sims = await startSimReplicas({
    replicas,
    basePort: 0,
    simArgs: [
      ...["--model", scenario.model, "--profile", "h200-llama3-8b", "--tokenizer", "char4"],
      ...["--speed", String(timeScale), "--max-model-len", "1048576"],
      ...(kvBlocks > 0 ? ["--kv-cache-size", String(kvBlocks)] : []),
    ],
    replicaArgs: (r) => kvEventsFlag(socketPort, replayPort, r),
    stdio: "ignore",
  });
  const probe = new StalenessProbe(socketPort);
  const ports = sims.urls.map((u) => new URL(u).port).join(",");
  const endpointsFile = join(dir, "endpoints.yaml");
  writeFileSync(endpointsFile, `endpoints: [{name: pod, address: 127.0.0.1, port: "${ports}"}]\n`);
  const config = routerConfig(POLICIES[policy], socketPort, replayPort, dir);
  const started = await Promise.allSettled(
    Array.from({ length: routers }, () =>
      startListener([
        ...[CLI_MAIN, "router", "--host", "127.0.0.1", "--port", "0"],
        ...["--endpoints-file", endpointsFile, "--config", config],
      ]),
    ),
  );
  const running = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  try {
    const failedStart = started.find((s) => s.status === "rejected");
    if (failedStart) throw failedStart.reason;
    const records = await runLive({
      ...scenarioReplay(scenario),
      url: running.map((router) => router.url),
      timeScale,
      blockTokens: BLOCK_TOKENS,
      onProgress: (ms, inFlight) =>
        process.stderr.write(
          `\r  ${policy} kv ${kvBlocks || "profile"} routers ${routers}: ${(ms / 1000).toFixed(0)} s, ${inFlight} in flight `,
        ),
    });
    process.stderr.write("\n");
    if (values.records) {
      mkdirSync(values.records, { recursive: true });
      const lines = records.map((r) => `${JSON.stringify(r)}\n`).join("");
      const suffix = routers > 1 ? `-r${routers}` : "";
      writeFileSync(join(values.records, `${policy}-${kvBlocks}${suffix}.jsonl`), lines);
    }
    const summary = summarize(records, {
      fromMs: warmupS * 1000,
      toMs: durationS * 1000,
      slo: scenario.slo,
      gpuHourPrice: scenario.price.gpuHour,
      gpus: replicas,
    });
    const failed = records.filter((r) => r.error !== undefined).length;
    return {
      summary,
      failed,
      staleP50: probe.percentile(50),
      staleP99: probe.percentile(99),
    };
  } finally {
    await Promise.all(
      running.map((router) => {
        router.child.kill("SIGTERM");
        return once(router.child, "exit");
      }),
    );
    probe.close();
    await sims.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const kvSizes = values["kv-blocks"].split(",").map(Number);
const routerCounts = values.routers.split(",").map(Number);
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const millis = (ms: number) => (Number.isNaN(ms) ? "–" : `${ms.toFixed(0)} ms`);
console.log(
  `${replicas} llmd sim (h200-llama3-8b, speed ${timeScale}) behind llmd router; ${values.sessions} Weka sessions of fold ${values.fold}, ${durationS} s (${warmupS} s warm-up)\n`,
);
console.log(
  "| sim KV (blocks) | routers | policy | requests | failed | captured | TTFT p50 | TTFT p99 | staleness p50 / p99 |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const kvBlocks of kvSizes)
  for (const routers of routerCounts)
    for (const policy of ["approx", "precise"] as const) {
      const r = await run(policy, kvBlocks, routers);
      const s = r.summary;
      console.log(
        `| ${kvBlocks || "profile"} | ${routers} | ${policy} | ${s.completed} | ${r.failed} | ${(s.captured * 100).toFixed(1)}% | ${secs(s.ttftMs.p50)} | ${secs(s.ttftMs.p99)} | ${millis(r.staleP50)} / ${millis(r.staleP99)} |`,
      );
    }
