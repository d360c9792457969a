/**
 * `llmd bench`'s tenants path end to end on loopback: the tenant mix, overloaded, through the real
 * router (examples/scenarios/tenants/ours.yaml, with a 100 ms batch TTL so that the 4-s run's
 * bursts shed batch, + objectives.yaml) in front of two real `llmd sim` servers. The identity headers must reach flow control (batch, priority −10, is shed with
 * `rejected-*` while chat never is), and every request must get an outcome.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { runLive, scenarioReplay } from "../../src/load/load-generator.ts";
import { runTenantClients } from "../../src/load/tenant-clients.ts";
import { loadScenario } from "../../src/workload/scenario.ts";
import { parseEndpointList } from "../../src/endpoints/sources/static-source.ts";
import type { RequestRecord } from "../../src/measure/records.ts";
import { tenantReport } from "../../src/report/tenant-report.ts";
import { parseObjectives } from "../../src/flow-control/identity.ts";
import { type Router, startRouter } from "../../src/gateway/router.ts";
import { parseSimConfig } from "../../src/sim/config.ts";
import { type SimServer, startSimServer } from "../../src/sim/server.ts";

const dir = join(dirname(fileURLToPath(import.meta.url)), "../../examples/scenarios/tenants");
/** Simulated time runs this much faster than wall time, in the servers and in the client alike. */
const SPEED = 4;

async function startSim(model: string): Promise<SimServer> {
  const parsed = parseSimConfig(
    // The stand-in tokenizer, as the fleet runs this scenario: the test is about flow control.
    { model, port: 0, host: "127.0.0.1", profile: "h200-llama3-8b", speed: SPEED, tokenizer: "char4" },
    {},
  );
  assert.ok(parsed.ok, parsed.ok ? "" : parsed.error);
  return startSimServer(parsed.config);
}

/** ours.yaml with batch shed after 100 ms in its band (the tuned 30 s outlasts this short run). */
function shortBatchTtl(config: string): string {
  const band = "- {priority: -10, maxRequests: 256, defaultRequestTTL: 30s}";
  assert.ok(config.includes(band), "ours.yaml's batch band changed: update this test");
  return config.replace(band, "- {priority: -10, maxRequests: 1, defaultRequestTTL: 100ms}");
}

describe("llmd bench: the tenant mix through a live router with flow control", () => {
  // Two replicas at load 1 (the base rates are 8 replicas' capacity), agent bursts of 20 instead of
  // 50: overloaded during each burst, yet drained within a few seconds.
  const overrides = [
    "fleet.replicas=2",
    "workload.load=1",
    "workload.burstSize=20",
    "durationS=4",
    "warmupS=0",
  ];
  const scenario = loadScenario(join(dir, "tenants.yaml"), overrides);
  const objectives = parseObjectives(readFileSync(join(dir, "objectives.yaml"), "utf8"));
  let sims: SimServer[] = [];
  let router: Router;
  let records: RequestRecord[] = [];

  before(async () => {
    sims = await Promise.all([startSim(scenario.model), startSim(scenario.model)]);
    router = await startRouter({
      config: shortBatchTtl(readFileSync(join(dir, "ours.yaml"), "utf8")),
      allowExperimentalPlugins: true,
      endpoints: parseEndpointList(sims.map((s) => s.url).join(",")),
      port: 0,
      host: "127.0.0.1",
      objectives,
      log: () => {},
    });
    records = await runLive({
      ...scenarioReplay(scenario),
      url: router.url,
      timeScale: SPEED,
      blockTokens: 16,
    });
  });
  after(async () => {
    await router?.close();
    await Promise.all(sims.map((s) => s.close()));
  });

  it("the objectives file gives the scenario's priorities", () => {
    assert.deepEqual(Object.fromEntries(objectives), scenario.objectives);
  });

  it("every request has exactly one outcome and none is lost", () => {
    assert.ok(records.length > 60, `only ${records.length} requests`);
    assert.equal(new Set(records.map((r) => r.id)).size, records.length);
    for (const r of records) {
      assert.ok(r.outcome !== undefined, `${r.id} got no answer (${r.error})`);
      assert.equal(r.outcome === "served", r.error === undefined, `${r.id}: ${r.outcome}`);
      if (r.outcome === "served") assert.ok(r.firstTokenMs >= r.arrivalMs && r.endMs >= r.firstTokenMs);
    }
    const report = tenantReport(records, 0, scenario.durationS * 1000);
    assert.deepEqual(
      report.tenants.map((t) => [t.tenant, t.priority, t.lost]),
      [
        ["chat", 100, 0],
        ["agents", 0, 0],
        ["batch", -10, 0],
      ],
    );
  });

  it("flow control sees the headers: batch is shed with rejected-*, chat is never shed", () => {
    const outcomes = (tenant: string) => records.filter((r) => r.tenant === tenant).map((r) => r.outcome);
    const batch = outcomes("batch");
    assert.ok(
      batch.some((o) => o?.startsWith("rejected-")),
      `batch outcomes: ${batch.join(",")}`,
    );
    // Flow control never sheds chat; a rare upstream 502 under host load is not its doing.
    const chat = outcomes("chat");
    assert.ok(!chat.some((o) => o?.startsWith("rejected-")), chat.join(","));
    assert.ok(chat.filter((o) => o === "served").length >= chat.length - 1, chat.join(","));
    const report = tenantReport(records, 0, scenario.durationS * 1000);
    assert.deepEqual(Object.keys(report.service).sort(), ["program-a", "program-b"]);
  });

  it("the router counted the programs' fairness ids and the batch priority", async () => {
    const text = await (await fetch(`${router.url}/metrics`)).text();
    const total = /^llm_d_epp_flow_control_requests_total\{(.*)\} (\d+)/gm;
    const labels = [...text.matchAll(total)].map((m) => m[1] ?? "");
    assert.ok(labels.some((l) => l.includes('fairness_id="program-a"') && l.includes('priority="0"')));
    assert.ok(labels.some((l) => l.includes('fairness_id="batch"') && l.includes('priority="-10"')));
  });

  it("--client-per-tenant: one thread per tenant sends that tenant's requests, merged in arrival order", async () => {
    const threaded = await runTenantClients({
      scenarioFile: join(dir, "tenants.yaml"),
      overrides,
      url: router.url,
      timeScale: SPEED,
      blockTokens: 16,
      tenants: Object.keys(scenario.objectives),
    });
    assert.equal(new Set(threaded.map((r) => r.id)).size, threaded.length, "no request sent twice");
    assert.ok(threaded.every((r) => r.outcome !== undefined));
    for (let i = 1; i < threaded.length; i++) assert.ok(threaded[i]!.arrivalMs >= threaded[i - 1]!.arrivalMs);
    // Agent bursts and batch arrive on a plan, so both runs send exactly the same ones; chat's later
    // turns follow its answers, so only its first turns are planned.
    const ids = (rs: RequestRecord[], tenant: string) =>
      rs
        .filter((r) => r.tenant === tenant && (tenant !== "chat" || r.id.endsWith(":0")))
        .map((r) => r.id)
        .sort();
    for (const tenant of ["agents", "batch", "chat"])
      assert.deepEqual(ids(threaded, tenant), ids(records, tenant), tenant);
    assert.ok(threaded.some((r) => r.tenant === "chat" && r.outcome === "served" && r.idealCachedTokens > 0));
  });

  it("--client-per-tenant: a thread that fails fails the run instead of hanging it", async () => {
    const run = runTenantClients({
      scenarioFile: join(dir, "no-such-scenario.yaml"),
      overrides: [],
      url: router.url,
      timeScale: SPEED,
      blockTokens: 16,
      tenants: ["chat", "agents"],
    });
    await assert.rejects(run, /no-such-scenario/);
  });
});
