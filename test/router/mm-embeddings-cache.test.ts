/**
 * `mm-embeddings-cache-producer` + `-scorer` in a running router over three simulators, through the
 * official openai client: a conversation that re-sends its images (with new questions) lands on the
 * replica that encoded them first, and the router counts the encoder-cache lookups and hits.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import OpenAI from "openai";
import { parseConfig } from "../../src/config/load.ts";
import type { Router } from "../../src/gateway/router.ts";
import type { SimServer } from "../../src/sim/server.ts";
import { MODEL, metricSum, routerFor, startSims } from "./harness.ts";

const CONFIG = `apiVersion: llm-d.ai/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: mm-embeddings-cache-producer
  parameters: {cacheSizeInMB: 2048}
- type: mm-embeddings-cache-scorer
- type: queue-scorer
- type: max-score-picker
schedulingProfiles:
- name: default
  plugins:
  - {pluginRef: mm-embeddings-cache-scorer, weight: 4}
  - {pluginRef: queue-scorer, weight: 1}
  - {pluginRef: max-score-picker}
`;

let sims: SimServer[];
let router: Router;
let client: OpenAI;

before(async () => {
  sims = await startSims(3);
  router = await routerFor(
    sims.map((s) => s.url),
    CONFIG,
  );
  client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: "unused", maxRetries: 0 });
});

after(async () => {
  await router.close();
  await Promise.all(sims.map((s) => s.close()));
});

/** A tiny distinct PNG-ish data URL per image. */
const image = (i: number) => `data:image/png;base64,${Buffer.from(`image number ${i}`).toString("base64")}`;

async function ask(question: string, imageUrl: string): Promise<string> {
  const { response } = await client.chat.completions
    .create({
      model: MODEL,
      max_tokens: 2,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: question },
            { type: "image_url", image_url: { url: imageUrl } },
          ],
        },
      ],
    })
    .withResponse();
  return response.headers.get("x-llmd-endpoint") ?? "";
}

test("a re-sent image lands where it was encoded", async () => {
  const home: string[] = [];
  for (let i = 0; i < 6; i++) home.push(await ask(`describe picture ${i}`, image(i)));
  for (const e of home) assert.ok(router.pool.get(e), `${e} is a pool member`);
  assert.ok(new Set(home).size > 1, `cold images spread over the replicas: ${home}`);
  for (let turn = 0; turn < 2; turn++)
    for (let i = 0; i < 6; i++)
      assert.equal(await ask(`turn ${turn}: what colour is it? (${i})`, image(i)), home[i], `image ${i}`);

  const metrics = await (await fetch(`${router.url}/metrics`)).text();
  assert.equal(metricSum(metrics, "llm_d_router_epp_encoder_cache_queries_total"), 18);
  assert.equal(metricSum(metrics, "llm_d_router_epp_encoder_cache_hits_total"), 12);
});

test("a config with only the scorer gets the producer, as llm-d auto-creates it", () => {
  const result = parseConfig(`apiVersion: llm-d.ai/v1
kind: EndpointPickerConfig
plugins: [{type: mm-embeddings-cache-scorer}, {type: max-score-picker}]
`);
  assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.issues));
  assert.ok(result.config.scheduler.parts.producers.some((p) => p.type === "mm-embeddings-cache-producer"));
});
