/**
 * `disaggregatedset-rollout-screener` in a running router: over simulators labelled as two
 * DisaggregatedSet revisions mid-rollout, every response names its revision in x-disagg-revision,
 * and its prefill (x-llmd-prefill-endpoint) and decode (x-llmd-endpoint) endpoints are both of that
 * revision; both revisions get traffic.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type Router, startRouter } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, startSims } from "./harness.ts";

const CONFIG = `apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- type: disaggregatedset-rollout-screener
- type: prefill-filter
- type: decode-filter
- type: queue-scorer
- type: always-disagg-pd-decider
- type: disagg-profile-handler
  parameters: {deciders: {prefill: always-disagg-pd-decider}}
schedulingProfiles:
- name: prefill
  plugins: [{pluginRef: prefill-filter}, {pluginRef: queue-scorer}]
- name: decode
  plugins: [{pluginRef: decode-filter}, {pluginRef: queue-scorer}]
`;

/** [name, llm-d.ai/role, revision]: old has two decode pods, new one of each. */
const PODS: [string, string, string][] = [
  ["old-prefill-0", "prefill", "old"],
  ["old-decode-0", "decode", "old"],
  ["old-decode-1", "decode", "old"],
  ["new-prefill-0", "prefill", "new"],
  ["new-decode-0", "decode", "new"],
];

const dir = mkdtempSync(join(tmpdir(), "llmd-rollout-"));
let sims: SimServer[] = [];
let router: Router;

before(async () => {
  sims = await startSims(PODS.length);
  const rows = PODS.map(
    ([name, role, revision], i) =>
      `- {name: ${name}, address: 127.0.0.1, port: ${sims[i]!.port}, labels: {llm-d.ai/role: ${role}, disaggregatedset.x-k8s.io/revision: ${revision}}}`,
  );
  const endpointsFile = join(dir, "endpoints.yaml");
  writeFileSync(endpointsFile, `endpoints:\n${rows.join("\n")}\n`);
  router = await startRouter({
    config: CONFIG,
    allowExperimentalPlugins: true,
    endpointsFile,
    port: 0,
    scrapeIntervalMs: 20,
    log: () => {},
  });
});

after(async () => {
  await router.close();
  await Promise.all(sims.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

test("prefill and decode of every request are of the revision x-disagg-revision names; both serve", async () => {
  const revisionOf = new Map(PODS.map(([name, , revision]) => [`default/${name}`, revision]));
  const served = new Map<string, number>();
  for (let i = 0; i < 40; i++) {
    const response = await fetch(`${router.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: MODEL, prompt: `request ${i}`, max_tokens: 2 }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    await response.arrayBuffer();
    const revision = response.headers.get("x-disagg-revision");
    const decode = response.headers.get("x-llmd-endpoint")!;
    const prefill = response.headers.get("x-llmd-prefill-endpoint")!;
    assert.ok(revision === "old" || revision === "new", `x-disagg-revision: ${revision}`);
    assert.equal(revisionOf.get(decode), revision, `${decode} decoded a request stamped ${revision}`);
    assert.equal(revisionOf.get(prefill), revision, `${prefill} prefilled a request stamped ${revision}`);
    served.set(revision, (served.get(revision) ?? 0) + 1);
  }
  assert.ok((served.get("old") ?? 0) > 0 && (served.get("new") ?? 0) > 0, JSON.stringify([...served]));
});
