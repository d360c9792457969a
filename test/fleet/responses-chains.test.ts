/**
 * Responses chains across two router replicas behind a load balancer without affinity: a turn that
 * reaches the replica that did not serve the chain's last turn finds nothing in its own prefix
 * index. With `responsesChains` it learns that turn's endpoint from the shared store and
 * `response-chain-scorer` keeps the chain there; without, the picker's tie-break moves it.
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
- type: approx-prefix-cache-producer
  parameters: {maxPrefixTokensToMatch: 1048576}
- type: prefix-cache-scorer
- type: response-chain-scorer
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins: [{pluginRef: prefix-cache-scorer}, {pluginRef: response-chain-scorer}, {pluginRef: max-score-picker}]
`;

async function sameEndpointShare(chains: boolean): Promise<number> {
  const yaml = `
durationS: 400
drainS: 120
fleet: { replicas: 4, engine: { maxModelLen: 1048576 } }
router: { configText: ${JSON.stringify(CONFIG)} }
workload: { type: weka, sessions: 12, thinkCapS: 2 }
responsesChains: ${chains}
routers: 2
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
