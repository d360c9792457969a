/**
 * Session plugins keyed on a Responses conversation through a real router: with dynamic session
 * affinity on the `response-chain` attribute, every turn of a chain is bound to one endpoint even
 * though the client sends no session header, and `session-state-producer` counts the chain's turns.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, routerFor, startSims } from "./harness.ts";

const CONFIG = `
apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins:
- type: session-state-producer
- type: session-affinity-scorer
  parameters:
    strategy: session_id
    sessionIdConfig: {sources: [{attribute: response-chain}]}
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins: [{pluginRef: session-affinity-scorer}, {pluginRef: max-score-picker}]
`;

let sims: SimServer[];
let router: Router;

before(async () => {
  sims = await startSims(4);
  const store = join(mkdtempSync(join(tmpdir(), "llmd-responses-session-")), "r.sqlite");
  router = await routerFor(
    sims.map((s) => s.url),
    CONFIG,
    { allowExperimentalPlugins: true, responses: { store } },
  );
});

after(async () => {
  await router.close();
  await Promise.all(sims.map((s) => s.close()));
});

test("a chain is bound to one endpoint by its response-chain attribute; its turns are counted", async () => {
  const openai = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
  const chains = [];
  for (let c = 0; c < 4; c++) {
    let previous: string | undefined;
    const endpoints = new Set<string | null>();
    for (let turn = 0; turn < 5; turn++) {
      const { data, response } = await openai.responses
        .create({
          model: MODEL,
          input: `chain ${c} turn ${turn}`,
          max_output_tokens: 2,
          ...(previous ? { previous_response_id: previous } : {}),
        })
        .withResponse();
      previous = data.id;
      endpoints.add(response.headers.get("x-llmd-endpoint"));
    }
    chains.push(endpoints);
  }
  for (const endpoints of chains) assert.equal(endpoints.size, 1, `a chain moved: ${[...endpoints]}`);
  const producer = router.config.plugins.get("session-state-producer") as unknown as { size: number };
  assert.equal(producer.size, 4);
});
