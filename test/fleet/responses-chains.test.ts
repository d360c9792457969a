/**
 * Responses chains in the fleet: with `responsesChains`, the simulated router knows the endpoint
 * that served each agent's last turn and `response-chain-scorer` keeps the chain there; without,
 * the same scorer has nothing to go on and the picker's load-aware tie-break spreads the turns.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { runScenario } from "../../src/fleet/run-scenario.ts";
import type { RequestRecord } from "../../src/measure/records.ts";
import { parseScenario } from "../../src/workload/scenario.ts";

const CONFIG = `
apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
# knownPrefixRatio 1: a grown prompt never counts as known, as for a router that did not see the chain.
- type: response-chain-scorer
  parameters: {knownPrefixRatio: 1}
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins: [{pluginRef: response-chain-scorer}, {pluginRef: max-score-picker}]
`;

async function sameEndpointShare(chains: boolean): Promise<number> {
  const yaml = `
durationS: 400
drainS: 120
fleet: { replicas: 4, engine: { maxModelLen: 1048576 } }
router: { configText: ${JSON.stringify(CONFIG)} }
workload: { type: weka, sessions: 12, thinkCapS: 2 }
responsesChains: ${chains}
`;
  const run = await runScenario(parseScenario(yaml, join(import.meta.dirname, "inline.yaml")));
  const lastEndpoint = new Map<string, number>();
  let same = 0;
  let follow = 0;
  const served = run.result.records.filter((r: RequestRecord) => r.outcome === "served");
  for (const r of served.sort((a, b) => a.endMs - b.endMs)) {
    const chain = r.id.slice(0, r.id.lastIndexOf(":"));
    const previous = lastEndpoint.get(chain);
    if (previous !== undefined) {
      follow++;
      if (previous === r.endpoint) same++;
    }
    lastEndpoint.set(chain, r.endpoint);
  }
  assert.ok(follow > 20, `only ${follow} chained turns`);
  return same / follow;
}

test("chained turns stay on the endpoint of their previous turn; without chains they rotate", async () => {
  const chained = await sameEndpointShare(true);
  const unchained = await sameEndpointShare(false);
  assert.ok(chained > 0.9, `chained ${chained}`);
  assert.ok(unchained < chained - 0.15, `unchained ${unchained}, chained ${chained}`);
});
