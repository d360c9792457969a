/**
 * Hostile-input fuzzing of the edge: seeded malformed requests (bodies, headers, methods and
 * paths, half-closed, reset and pipelined connections; test/fuzz/cases.ts) over raw loopback
 * sockets at an in-process router (over 2 simulators) and/or a simulator. Prints cases by kind,
 * status counts, the 5xx and hangs (first few), leak checks and time; exits 1 if a check fails.
 *
 *   npm run bench -- fuzz [--target router|sim|both] [--cases 100000] [--seed 1] [--concurrency 32]
 */
import type { Router } from "../src/gateway/router.ts";
import type { SimServer } from "../src/sim/server.ts";
import type { FuzzTarget } from "../test/fuzz/cases.ts";
import {
  type Check,
  type FuzzReport,
  normalRequestChecks,
  ROUTER_TARGET,
  routerLeakChecks,
  runFuzz,
  SIM_TARGET,
  simLeakChecks,
  startFuzzRouter,
  startFuzzSim,
} from "../test/fuzz/run.ts";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback;
}
const target = flag("target", "both");
const CASES = Number(flag("cases", "100000"));
const SEED = Number(flag("seed", "1"));
const CONCURRENCY = Number(flag("concurrency", "32"));
if (!["router", "sim", "both"].includes(target) || !(CASES > 0) || !(CONCURRENCY > 0)) {
  console.error(
    "usage: npm run bench -- fuzz [--target router|sim|both] [--cases N] [--seed N] [--concurrency N]",
  );
  process.exit(2);
}

let uncaught = 0;
process.on("uncaughtException", (err) => {
  uncaught++;
  console.error("uncaught exception:", err);
});

function print(name: string, report: FuzzReport, checks: Check[]): boolean {
  console.log(
    `\n## ${name}: ${report.cases} cases, seed ${SEED}, concurrency ${CONCURRENCY}, ${report.seconds.toFixed(1)} s`,
  );
  console.log("\n| kind | cases |\n|---|---|");
  for (const [kind, n] of [...report.byKind].sort()) console.log(`| ${kind} | ${n} |`);
  console.log("\n| status | count |\n|---|---|");
  for (const [status, n] of [...report.byStatus].sort()) console.log(`| ${status} | ${n} |`);
  console.log(
    `\n5xx: ${report.serverErrors.length}; hangs (whole requests, no answer): ${report.hangs.length}`,
  );
  const closed = new Map<string, number>();
  for (const f of report.closedUnanswered) closed.set(f.kind, (closed.get(f.kind) ?? 0) + 1);
  console.log(`closed without an answer (first 20, by kind): ${JSON.stringify(Object.fromEntries(closed))}`);
  for (const f of [...report.serverErrors, ...report.hangs].slice(0, 5)) {
    console.log(
      `- ${f.kind} → ${f.status}\n  request: ${JSON.stringify(f.request)}\n  response: ${JSON.stringify(f.response)}`,
    );
  }
  const all: Check[] = [
    { name: "no 5xx", ok: report.serverErrors.length === 0, detail: String(report.serverErrors.length) },
    {
      name: "no hang (whole request, client timeout)",
      ok: report.hangs.length === 0,
      detail: String(report.hangs.length),
    },
    { name: "no uncaught exception", ok: uncaught === 0, detail: String(uncaught) },
    ...checks,
  ];
  console.log("\n| check | ok | value |\n|---|---|---|");
  for (const c of all)
    console.log(`| ${c.name} | ${c.ok ? "yes" : "**NO**"} | ${c.detail.replaceAll("|", "\\|")} |`);
  return all.every((c) => c.ok);
}

async function fuzz(name: string, port: number, fuzzTarget: FuzzTarget, checks: () => Promise<Check[]>) {
  const report = await runFuzz({
    port,
    target: fuzzTarget,
    seed: SEED,
    count: CASES,
    concurrency: CONCURRENCY,
    onProgress: (done) => {
      if (done % 10_000 === 0) process.stderr.write(`${name}: ${done}/${CASES}\n`);
    },
  });
  return print(name, report, await checks());
}

let ok = true;
if (target === "sim" || target === "both") {
  const sim = await startFuzzSim();
  try {
    ok =
      (await fuzz("llmd sim", sim.port, SIM_TARGET, async () => [
        ...(await simLeakChecks(sim)),
        ...(await normalRequestChecks(sim.url, "sim")),
      ])) && ok;
  } finally {
    await sim.close();
  }
}
if (target === "router" || target === "both") {
  const sims: SimServer[] = await Promise.all([startFuzzSim(), startFuzzSim()]);
  let router: Router | undefined;
  try {
    router = await startFuzzRouter(sims);
    for (let i = 0; i < 100 && (await fetch(`${router.url}/ready`)).status !== 200; i++)
      await new Promise((r) => setTimeout(r, 50));
    const r = router;
    ok =
      (await fuzz("llmd router (over 2 sims)", router.port, ROUTER_TARGET, async () => [
        ...(await routerLeakChecks(r)),
        ...(await simLeakChecks(sims[0]!, "sim 1")),
        ...(await simLeakChecks(sims[1]!, "sim 2")),
        ...(await normalRequestChecks(r.url, "router")),
      ])) && ok;
  } finally {
    await router?.close();
    await Promise.all(sims.map((s) => s.close()));
  }
}
process.exit(ok ? 0 : 1);
