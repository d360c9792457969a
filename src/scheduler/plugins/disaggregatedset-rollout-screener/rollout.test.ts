/**
 * A DisaggregatedSet rollout through a loaded EndpointPickerConfig (screener + disagg handler with
 * prefill and decode profiles): at every step of the rollout, each request's prefill and decode come
 * from one revision, the one stamped in x-disagg-revision, and traffic follows the ready replicas.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { LlmdError } from "../../../api/errors.ts";
import { parseConfig } from "../../../config/load.ts";
import { seededRandom } from "../../../core/random.ts";
import { type Endpoint, ROLE_LABEL } from "../../../endpoints/endpoint.ts";
import { UPSTREAM_HEADERS_STATE_KEY } from "../../framework/data-keys.ts";
import { makeContext, makeEndpoint } from "../../framework/testing.ts";
import { REVISION_HEADER, REVISION_LABEL } from "./index.ts";

const CONFIG = `
apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- type: disaggregatedset-rollout-screener
- type: prefill-filter
- type: decode-filter
- type: queue-scorer
- type: always-disagg-pd-decider
- type: disagg-profile-handler
  parameters:
    deciders: {prefill: always-disagg-pd-decider}
schedulingProfiles:
- name: prefill
  plugins: [{pluginRef: prefill-filter}, {pluginRef: queue-scorer}]
- name: decode
  plugins: [{pluginRef: decode-filter}, {pluginRef: queue-scorer}]
`;

function load() {
  const result = parseConfig(CONFIG, { allowExperimentalPlugins: true, random: seededRandom(7) });
  assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.issues));
  return result.config.scheduler;
}

let port = 8000;
const pods = (revision: string, role: string, n: number): Endpoint[] =>
  Array.from({ length: n }, () =>
    makeEndpoint(`${revision}-${role}-${port}`, {
      port: port++,
      labels: { [ROLE_LABEL]: role, [REVISION_LABEL]: revision },
    }),
  );

/** Ready pods at each step of a 4P4D rollout from `old` to `new` (new pods become ready first). */
const STEPS: { old: [number, number]; new: [number, number] }[] = [
  { old: [4, 4], new: [0, 0] },
  { old: [4, 4], new: [1, 0] }, // a new prefill is ready, its decode is not: new is not eligible
  { old: [3, 3], new: [1, 1] },
  { old: [2, 2], new: [2, 2] },
  { old: [1, 2], new: [3, 2] },
  { old: [0, 1], new: [4, 3] }, // the last old decode has no old prefill left: old is not eligible
  { old: [0, 0], new: [4, 4] },
];

test("a rollout never pairs old prefill with new decode, and traffic follows ready replicas", () => {
  const scheduler = load();
  const revisionOf = (e: Endpoint | undefined) => e?.metadata.labels[REVISION_LABEL];
  const onNew: number[] = [];
  for (const step of STEPS) {
    const pool = [
      ...pods("old", "prefill", step.old[0]),
      ...pods("old", "decode", step.old[1]),
      ...pods("new", "prefill", step.new[0]),
      ...pods("new", "decode", step.new[1]),
    ];
    let toNew = 0;
    for (let i = 0; i < 400; i++) {
      const ctx = makeContext({ requestId: `r${i}`, path: "/v1/chat/completions", promptText: `p${i}` });
      scheduler.prepare(ctx, pool);
      const result = scheduler.schedule(ctx, pool);
      assert.ok(!(result instanceof LlmdError), String(result));
      scheduler.preRequest(ctx, result);
      const prefill = revisionOf(result.profileResults.get("prefill")?.targetEndpoints[0]);
      const decode = revisionOf(result.profileResults.get("decode")?.targetEndpoints[0]);
      const stamped = (ctx.state.get(UPSTREAM_HEADERS_STATE_KEY) as Map<string, string>).get(REVISION_HEADER);
      assert.ok(
        prefill !== undefined && prefill === decode,
        `step ${JSON.stringify(step)}: ${prefill}/${decode}`,
      );
      assert.equal(stamped, decode);
      if (decode === "new") toNew++;
    }
    onNew.push(toNew / 400);
  }
  assert.equal(onNew[0], 0);
  assert.equal(onNew[1], 0, "new has no ready decode yet");
  assert.ok(onNew[2]! > 0.15 && onNew[2]! < 0.35, `3:1 → about a quarter on new, got ${onNew[2]}`);
  assert.ok(onNew[3]! > 0.4 && onNew[3]! < 0.6, `2:2 → about half, got ${onNew[3]}`);
  assert.ok(onNew[4]! > 0.5 && onNew[4]! < 0.7, `max-role 2 vs 3 → about 60% on new, got ${onNew[4]}`);
  assert.equal(onNew[5], 1, "old has no prefill left");
  assert.equal(onNew[6], 1);
});
