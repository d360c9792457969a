import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadScenario } from "../../src/workload/scenario.ts";
import type { RequestRecord } from "../../src/measure/records.ts";
import { runScenario } from "../../src/fleet/run-scenario.ts";
import { newRecord } from "../../src/measure/records.ts";
import {
  formatTenantReport,
  jainIndex,
  tailBreakdown,
  tenantReport,
} from "../../src/report/tenant-report.ts";

const here = dirname(fileURLToPath(import.meta.url));
const tenants = join(here, "../../examples/scenarios/tenants/tenants.yaml");

const runs = new Map<string, Promise<RequestRecord[]>>();

/**
 * A tiny overloaded tenants run: 2 replicas at roughly 2× their capacity for 20 s. Deterministic,
 * so each config runs once and its tests share the records.
 */
function run(config: string, load = 0.5, durationS = 20): Promise<RequestRecord[]> {
  const key = `${config}@${load}/${durationS}`;
  let records = runs.get(key);
  if (!records) {
    const scenario = loadScenario(tenants, [
      `router.config=${config}.yaml`,
      "fleet.replicas=2",
      `durationS=${durationS}`,
      "warmupS=0",
      "drainS=60",
      `workload.load=${load}`,
    ]);
    records = runScenario(scenario).then((done) => done.result.records);
    runs.set(key, records);
  }
  return records;
}

function byTenant(records: readonly RequestRecord[], tenant: string): RequestRecord[] {
  return records.filter((r) => r.tenant === tenant);
}

describe("fleet flow control (tiny tenants scenario)", () => {
  for (const config of ["no-flow-control", "llm-d-flow-control", "ours"]) {
    it(`${config}: every arrival ends exactly once, none lost`, async () => {
      const records = await run(config);
      assert.ok(records.length > 200, `only ${records.length} arrivals`);
      assert.equal(new Set(records.map((r) => r.id)).size, records.length);
      for (const r of records) {
        assert.ok(r.outcome !== undefined && r.outcome !== "unfinished", `${r.id}: ${r.outcome}`);
        assert.equal(r.outcome === "served", r.error === undefined, r.id);
        if (r.outcome === "served") assert.ok(r.firstTokenMs >= r.arrivalMs && r.endMs >= r.firstTokenMs);
        else assert.ok(Number.isFinite(r.endMs), `${r.id} has no end time`);
      }
      assert.deepEqual(new Set(records.map((r) => r.tenant)), new Set(["chat", "agents", "batch"]));
    });
  }

  it("without flow control only the sheddable batch tenant is rejected, at once", async () => {
    const records = await run("no-flow-control");
    const dropped = records.filter((r) => r.outcome !== "served");
    assert.ok(dropped.length > 0, "overload should shed some batch");
    for (const r of dropped) {
      assert.equal(r.tenant, "batch");
      assert.equal(r.outcome, "rejected-saturated");
      assert.ok(Math.abs(r.endMs - r.arrivalMs) < 1e-6, `${r.id} waited for its 429`);
    }
  });

  it("tuned flow control, 60 s of overload: chat is never dropped and waits far less than agents; batch is shed first", async () => {
    // batch waits out bursts (30 s TTL), so a shorter overload would shed nothing
    const records = await run("ours", 0.5, 60);
    const chat = byTenant(records, "chat");
    assert.ok(chat.every((r) => r.outcome === "served"));
    const meanWait = (list: RequestRecord[]) =>
      list.reduce((sum, r) => sum + (Number.isNaN(r.queuedMs) ? 0 : r.queuedMs), 0) / list.length;
    assert.ok(meanWait(chat) * 10 < meanWait(byTenant(records, "agents")));
    const shedShare = (tenant: string) => {
      const list = byTenant(records, tenant);
      return list.filter((r) => r.outcome !== "served").length / list.length;
    };
    assert.ok(shedShare("batch") > shedShare("agents"), "batch must be shed before agents");
    // batch waits at most its band's TTL (30 s) for a 429, and is shed only by that TTL or a full band
    for (const r of byTenant(records, "batch")) {
      if (r.outcome === "served") continue;
      assert.ok(
        r.endMs - r.arrivalMs <= 30_000 + 1e-6,
        `${r.id} waited ${r.endMs - r.arrivalMs} ms for its 429`,
      );
      assert.ok(["rejected-ttl-expired", "rejected-saturated"].includes(r.outcome!), `${r.id}: ${r.outcome}`);
    }
    const { tenants: rows } = tenantReport(records, 0, 20_000);
    assert.deepEqual(
      rows.map((t) => [t.tenant, t.priority]),
      [
        ["chat", 100],
        ["agents", 0],
        ["batch", -10],
      ],
    );
  });

  it("tuned flow control at a quarter of that load (about half the capacity): nothing is shed", async () => {
    const records = await run("ours", 0.125);
    assert.ok(byTenant(records, "batch").length > 10 && byTenant(records, "agents").length >= 50);
    const dropped = records.filter((r) => r.outcome !== "served");
    assert.deepEqual(
      dropped.map((r) => `${r.tenant}:${r.outcome}`),
      [],
    );
  });

  it("tail breakdown: slow requests' queue, engine wait and first step, by their replica's main tenant", () => {
    /** A served request: arrival, flow-control wait, engine wait, first step, all ms. */
    const served = (
      id: string,
      tenant: string,
      endpoint: number,
      times: [number, number, number, number],
    ) => {
      const [arrival, queued, engineWait, firstStep] = times;
      const r: RequestRecord = {
        ...newRecord(id, tenant, arrival, 2000),
        tenant,
        fairnessId: "f",
        priority: 0,
        outcome: "served",
        queuedMs: queued,
        endpoint,
        cachedTokens: 1000,
      };
      r.startMs = arrival + queued + engineWait;
      r.firstTokenMs = r.startMs + firstStep;
      return r;
    };
    const records = [
      ...Array.from({ length: 18 }, (_, i) => served(`c${i}`, "chat", 0, [i, 0, 0, 20])),
      served("slow-a", "chat", 1, [50, 10, 100, 90]),
      served("slow-b", "chat", 0, [60, 30, 20, 50]),
      ...Array.from({ length: 3 }, (_, i) => served(`a${i}`, "agents", 1, [i, 0, 0, 500])),
      served("late", "chat", 0, [5000, 0, 900, 900]), // outside the window
    ];
    const t = tailBreakdown(records, 0, 1000, "chat", 0.9)!;
    assert.equal(t.thresholdMs, 20);
    assert.equal(t.count, 2);
    assert.deepEqual([t.ttftMs, t.queuedMs, t.engineWaitMs, t.firstStepsMs], [(200 + 100) / 2, 20, 60, 70]);
    assert.deepEqual(t.byReplicaTenant, { agents: 1, chat: 1 });
    assert.equal(tailBreakdown(records, 0, 1000, "batch"), undefined);
  });

  it("Jain's index: 1 for equal service, 1/n when one flow gets everything", () => {
    assert.equal(jainIndex([5, 5]), 1);
    assert.equal(jainIndex([7, 0]), 0.5);
    assert.equal(jainIndex([1, 3]), 16 / 20);
  });

  it("the table's Jain line says '-' when no agent program was served in the window", () => {
    const record = newRecord("c1", "chat", 0, 100);
    Object.assign(record, { tenant: "chat", fairnessId: "chat", priority: 100, outcome: "served" });
    const report = tenantReport([record as RequestRecord], 0, 1000);
    const lines = formatTenantReport(report, "x", "1");
    assert.equal(lines.at(-1), "  agents Jain - ()");
    assert.match(lines[0]!, /^x\s+1 chat\s+100\s+1\s+1 /);
  });
});

describe("fleet flow control with the probabilistic admitter and a tenant map", () => {
  const TENANTS =
    "tenants=[{name: chat, apiKeys: [chat-key-0001]}, {name: batch, apiKeys: [batch-key-0001], maxPriority: -10}]";
  const records = (seed: number) =>
    runScenario(
      loadScenario(tenants, [
        "router.config=admitter.yaml",
        "fleet.replicas=2",
        "durationS=20",
        "warmupS=0",
        "drainS=300",
        "workload.load=1.5",
        `seed=${seed}`,
        TENANTS,
      ]),
    ).then((done) => done.result.records);

  it("sheds batch before it queues, the tenant map names the flows, and nothing is lost", async () => {
    const list = await records(1);
    const batch = byTenant(list, "batch");
    const shed = batch.filter((r) => r.error === "shed");
    assert.ok(shed.length > 0 && shed.length < batch.length, `${shed.length} of ${batch.length} shed`);
    for (const r of shed) assert.equal(r.outcome, "rejected-saturated");
    assert.ok(!list.some((r) => r.tenant !== "batch" && r.error === "shed"), "only sheddable work is shed");
    // Keyed tenants take their name as fairness id; the unkeyed agents fall back to default-flow.
    assert.deepEqual(new Set(batch.map((r) => r.fairnessId)), new Set(["batch"]));
    assert.deepEqual(new Set(byTenant(list, "chat").map((r) => r.fairnessId)), new Set(["chat"]));
    assert.deepEqual(
      new Set(byTenant(list, "agents").map((r) => [r.fairnessId, r.priority].join())),
      new Set(["default-flow,0"]),
    );
    for (const r of list) assert.ok(r.outcome !== undefined && r.outcome !== "unfinished", r.id);
  });

  it("sheds with the seeded random source: the same seed sheds the same requests", async () => {
    const shedIds = (list: RequestRecord[]) => list.filter((r) => r.error === "shed").map((r) => r.id);
    assert.deepEqual(shedIds(await records(2)), shedIds(await records(2)));
  });
});
