/**
 * The `llmd bench` command as a user runs it (a real process) against a real router and simulator
 * on loopback: a short tenant mix, with the `--json`, `--records` and `--metrics-log` files checked
 * against what it printed and what the router exports.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { loadScenario } from "../../src/workload/scenario.ts";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { routerFor } from "../router/harness.ts";
import { startTestSim } from "../sim/helpers.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const scenarioFile = join(root, "examples/scenarios/tenants/tenants.yaml");
const overrides = ["durationS=3", "warmupS=0", "workload.load=0.1", "workload.burstSize=5"];

describe("llmd bench CLI: per-request records and the router's metrics", () => {
  let sim: SimServer;
  let router: Router;
  let stdout = "";
  const out = mkdtempSync(join(tmpdir(), "llmd-bench-"));
  const recordsFile = join(out, "records.jsonl");
  const jsonFile = join(out, "summary.json");
  const metricsFile = join(out, "metrics.jsonl");

  before(async () => {
    sim = await startTestSim({ model: loadScenario(scenarioFile, overrides).model });
    router = await routerFor([sim.url]);
    const args = ["--import", "tsx", "src/cli/main.ts", "bench", "--url", router.url, scenarioFile];
    const flags = [...overrides.flatMap((o) => ["--set", o]), "--quiet", "--label", "cli"];
    const run = await promisify(execFile)(
      process.execPath,
      [...args, ...flags, "--records", recordsFile, "--json", jsonFile, "--metrics-log", metricsFile],
      { cwd: root },
    );
    stdout = run.stdout;
  });
  after(async () => {
    await router.close();
    await sim.close();
  });

  it("writes one JSON line per request, each served with ordered times", () => {
    const records = readFileSync(recordsFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    const summary = JSON.parse(readFileSync(jsonFile, "utf8"));
    assert.ok(records.length > 3, `only ${records.length} records`);
    // The summary and the tenant table count arrivals in the window [warmupS, durationS) = [0, 3 s);
    // a request planned just before its end may be sent just after it.
    const inWindow = records.filter((r) => r.arrivalMs < 3000);
    assert.equal(inWindow.length, summary.requests);
    for (const r of records) {
      assert.ok(["chat", "agents", "batch"].includes(r.tenant), r.tenant);
      assert.equal(r.outcome, "served", JSON.stringify(r));
      assert.ok(r.arrivalMs <= r.firstTokenMs && r.firstTokenMs <= r.endMs, JSON.stringify(r));
    }
    const chat = inWindow.filter((r) => r.tenant === "chat").length;
    assert.match(stdout, new RegExp(`^cli\\s+0\\.1 chat\\s+100\\s+${chat}\\s+${chat}\\s`, "m"));
  });

  it("logs the router's per-endpoint waiting queue about once a second", () => {
    const samples = readFileSync(metricsFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.ok(samples.length >= 3, `${samples.length} samples over a 3 s run`);
    const key = sim.url.replace("http://", "default/");
    for (const s of samples) {
      assert.equal(s.error, undefined);
      assert.equal(
        typeof s.series[`llm_d_epp_per_endpoint_queue_size{name="default",endpoint="${key}"}`],
        "number",
      );
    }
    const times = samples.map((s) => s.atMs);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
      "in time order",
    );
  });
});
