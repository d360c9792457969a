/**
 * xPyD in the fleet simulator: llm-d's P/D config picks a prefill and a decode replica (by their
 * `llm-d.ai/role` labels), the prefill leg runs on the prefill engine, the KV moves at the shared
 * transfer model's cost and the decode leg runs on the decode engine; with injected transfer
 * failures and replica deaths every request still ends with an explicit outcome and no block is
 * left held.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { pdInvariantViolations } from "../../src/fleet/pd-invariants.ts";
import { runScenario } from "../../src/fleet/run-scenario.ts";
import { loadConfig } from "../../src/config/index.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { parseScenario } from "../../src/workload/scenario.ts";

const scenarios = fileURLToPath(new URL("../../examples/scenarios/", import.meta.url));

function scenario(yaml: string, overrides: string[] = []) {
  return parseScenario(yaml, join(scenarios, "inline.yaml"), overrides);
}

const PD = `
seed: 2
durationS: 60
drainS: 120
fleet:
  replicas: 4
  engine: { maxModelLen: 1048576 }
  groups: [{ role: prefill, replicas: 2 }, { role: decode, replicas: 2 }]
router: { config: pd-policies/pd-epp.yaml }
workload: { type: agentic, sessions: 24, rampS: 5 }
`;

describe("xPyD fleet", () => {
  it("runs the prefill leg on a prefill replica and the decode leg on a decode replica", async () => {
    const run = await runScenario(scenario(PD));
    const { records, pd, blocksInUseAtEnd, timeline } = run.result;
    assert.ok(records.length > 30, `${records.length} requests`);
    assert.ok(records.every((r) => r.outcome === "served"));
    assert.deepEqual(pdInvariantViolations(run.result), []);
    assert.ok(pd!.requests > records.length / 2, `${pd!.requests} of ${records.length} disaggregated`);
    assert.equal(pd!.transfers, pd!.requests);
    assert.equal(pd!.fallbacks, 0);
    assert.equal(blocksInUseAtEnd, 0);
    // Every request is sent to a decode replica; the prefill replicas do the prompts' work.
    assert.ok(records.every((r) => r.endpoint >= 2));
    const prefilled = timeline.totals(0, 60_000);
    const onPrefill = prefilled[0]! + prefilled[1]!;
    assert.ok(
      onPrefill > 5 * (prefilled[2]! + prefilled[3]!),
      `prefill tokens by replica ${prefilled.join(", ")}`,
    );
    // The client sees the prefill's cached tokens (the sidecar's rewrite), not the decode's.
    const longest = records.reduce((a, b) => (b.inputTokens > a.inputTokens ? b : a));
    assert.ok(longest.cachedTokens < longest.inputTokens - 1);
  });

  it("with transfer failures and replica deaths, every request ends explicitly and no block is held", async () => {
    const run = await runScenario(
      scenario(PD, [
        "faults.transferFailureRate=0.2",
        "faults.replicaDeathEveryS=10",
        "fleet.kvTransfer.abortTimeoutS=2",
      ]),
    );
    const { pd, deaths, killedRequests, retriedRequests } = run.result;
    assert.deepEqual(pdInvariantViolations(run.result), []);
    assert.ok(deaths >= 5, `${deaths} deaths`);
    assert.ok(killedRequests > 0 && retriedRequests > 0);
    assert.ok(pd!.transferFailures > 0 && pd!.transfers > 0);
  });

  it("the P/D and aggregated comparison configs load", () => {
    for (const name of ["pd-epp.yaml", "aggregated.yaml"]) {
      const path = join(scenarios, "pd-policies", name);
      assert.ok(loadConfig({ path }, { clock: new ManualClock() }).scheduler, name);
    }
  });

  it("validates the groups against the replica count", () => {
    assert.throws(() => scenario(PD, ["fleet.replicas=5"]), /groups' replicas must sum to fleet.replicas/);
  });
});
