/**
 * `llmd bench --responses` as a user runs it against a real router (with a SQLite Responses store)
 * over two simulators: a few Claude Code (weka) sessions whose agents' turns go out as Responses
 * chains. The router's stored responses show chained turns named their previous turn, and chained
 * turns report most of their prompt as cached.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { loadScenario } from "../../src/workload/scenario.ts";
import { routerFor } from "../router/harness.ts";
import { startTestSim } from "../sim/helpers.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const scenarioFile = join(root, "examples/scenarios/weka-16.yaml");
const overrides = [
  "fleet.replicas=2",
  "workload.sessions=3",
  "workload.thinkCapS=1",
  "durationS=6",
  "warmupS=0",
];

describe("llmd bench --responses: agents' turns as Responses chains", () => {
  let sims: SimServer[];
  let router: Router;
  const dir = mkdtempSync(join(tmpdir(), "llmd-bench-responses-"));
  const store = join(dir, "responses.sqlite");
  const recordsFile = join(dir, "records.jsonl");

  before(async () => {
    const model = loadScenario(scenarioFile, overrides).model;
    sims = await Promise.all([0, 1].map(() => startTestSim({ model, "max-model-len": 1048576 })));
    router = await routerFor(
      sims.map((s) => s.url),
      undefined,
      { responses: { store } },
    );
    const args = ["--import", "tsx", "src/cli/main.ts", "bench", "--url", router.url, scenarioFile];
    const flags = [...overrides.flatMap((o) => ["--set", o]), "--quiet", "--responses"];
    await promisify(execFile)(process.execPath, [...args, ...flags, "--records", recordsFile], { cwd: root });
  });
  after(async () => {
    await router.close();
    await Promise.all(sims.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("stores every served turn, chained turns naming their previous response", async () => {
    const records = readFileSync(recordsFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    const served = records.filter((r) => r.outcome === "served");
    assert.equal(served.length, records.length, JSON.stringify(records.find((r) => r.outcome !== "served")));
    const db = new Database(store, { readonly: true });
    const rows = db
      .prepare("SELECT id, json_extract(response, '$.previous_response_id') AS previous FROM responses")
      .all() as { id: string; previous: string | null }[];
    db.close();
    assert.equal(rows.length, served.length, "one stored response per served turn");
    const chained = rows.filter((r) => r.previous !== null);
    const firsts = rows.length - chained.length;
    assert.ok(
      chained.length >= 3 && chained.length >= rows.length / 2,
      `${chained.length} chained of ${rows.length}`,
    );
    assert.ok(firsts >= 1, "a session's first turn starts its chain");
    const ids = new Set(rows.map((r) => r.id));
    for (const r of chained) assert.ok(ids.has(r.previous!), `${r.id}'s previous turn is stored`);
    // Through the router's API as well.
    const one = chained[chained.length - 1]!;
    const res = await fetch(`${router.url}/v1/responses/${one.id}`);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { previous_response_id: string | null };
    assert.equal(body.previous_response_id, one.previous);
  });

  it("reports most of a chained turn's prompt as cached", () => {
    const records = readFileSync(recordsFile, "utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line));
    const cached = records.filter((r) => r.cachedTokens > r.inputTokens / 2);
    assert.ok(cached.length >= records.length / 2, `${cached.length} of ${records.length} mostly cached`);
  });
});
