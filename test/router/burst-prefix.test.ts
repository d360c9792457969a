/**
 * `burst-prefix-cache-producer` in a running router over four simulators, wired as llm-d's burst
 * sample wires it (decode-filter, prefix-cache-scorer on the burst producer ×2, load-aware-scorer
 * ×1; without its token-producer, which names a vLLM service, and with a 1 s window so a loaded
 * test machine still delivers each burst within one): concurrent RL rollout samples of one prompt
 * land together, two groups on two replicas, and `maxPerReplica: 2` spreads a group two per replica.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, routerFor, startSims } from "./harness.ts";

const config = (maxPerReplica: number) => `apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: single-profile-handler
- type: decode-filter
- type: burst-prefix-cache-producer
  parameters: {windowDurationMs: 1000, maxPerReplica: ${maxPerReplica}, minColocateBlocks: 0}
- type: prefix-cache-scorer
  parameters: {prefixMatchInfoProducerName: burst-prefix-cache-producer}
- type: load-aware-scorer
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - {pluginRef: decode-filter}
  - {pluginRef: prefix-cache-scorer, weight: 2.0}
  - {pluginRef: load-aware-scorer, weight: 1.0}
  - {pluginRef: max-score-picker}
`;

let sims: SimServer[];
const routers: Router[] = [];

before(async () => {
  sims = await startSims(4);
});

after(async () => {
  await Promise.all(routers.map((r) => r.close()));
  await Promise.all(sims.map((s) => s.close()));
});

async function client(maxPerReplica: number): Promise<OpenAI> {
  const router = await routerFor(
    sims.map((s) => s.url),
    config(maxPerReplica),
    { allowExperimentalPlugins: true },
  );
  routers.push(router);
  const openai = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
  // Opens the connections a burst uses, so its requests reach the router together, not one new
  // connection at a time (distinct prompts: no group, no affinity).
  await burst(
    openai,
    Array.from({ length: 12 }, (_, i) => `warm-up ${i}`),
  );
  return openai;
}

/** A rollout prompt of ~1,500 tokens (several 64-token blocks). */
const prompt = (task: string) => `Task ${task}: prove the lemma, showing every step. `.repeat(120);

/** Sends every prompt at once; the serving endpoint of each. */
function burst(openai: OpenAI, prompts: string[]): Promise<string[]> {
  return Promise.all(
    prompts.map(async (p) => {
      const { response } = await openai.completions
        .create({ model: MODEL, prompt: p, max_tokens: 2 })
        .withResponse();
      return response.headers.get("x-llmd-endpoint") ?? "";
    }),
  );
}

test("two concurrent rollout groups: each whole on one replica, the two on different replicas", async () => {
  const openai = await client(-1);
  const served = await burst(openai, [...Array(6).fill(prompt("A")), ...Array(6).fill(prompt("B"))]);
  const a = new Set(served.slice(0, 6));
  const b = new Set(served.slice(6));
  assert.equal(a.size, 1, `group A: ${[...a]}`);
  assert.equal(b.size, 1, `group B: ${[...b]}`);
  assert.notDeepEqual([...a], [...b]);
});

test("maxPerReplica 2: eight samples, two on each of the four replicas", async () => {
  const openai = await client(2);
  const served = await burst(openai, Array(8).fill(prompt("C")));
  const counts = new Map<string, number>();
  for (const e of served) counts.set(e, (counts.get(e) ?? 0) + 1);
  assert.deepEqual([...counts.values()], [2, 2, 2, 2], JSON.stringify([...counts]));
});
