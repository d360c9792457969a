/**
 * `npm run bench -- multimodal [--endpoints 16] [--iterations 200]`: what encoder-cache affinity
 * (`mm-embeddings-cache-producer`) adds to scheduling one chat request: keying its images (SHA-256
 * of each URL or base64 data URL) and matching them against every endpoint's index, for 1 and 8
 * images by URL and as 64 KB and 1 MB data URLs, with the index warm (every image already
 * recorded on one endpoint). Medians in ms.
 */
import { parseArgs } from "node:util";
import {
  definition,
  type MmEmbeddingsCacheProducer,
} from "../src/scheduler/plugins/mm-embeddings-cache-producer/index.ts";
import { makeContext, makeEndpoint, makeEnv } from "../src/scheduler/framework/testing.ts";
import type { SchedulingResult } from "../src/scheduler/framework/types.ts";

const { values } = parseArgs({
  options: { endpoints: { type: "string", default: "16" }, iterations: { type: "string", default: "200" } },
});
const iterations = Number(values.iterations);
const endpoints = Array.from({ length: Number(values.endpoints) }, (_, i) => makeEndpoint(`e${i}`));

const dataUrl = (kb: number, seed: number) =>
  `data:image/png;base64,${Buffer.alloc(kb * 768, seed).toString("base64")}`;
const chat = (urls: string[]) => ({
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "compare these" },
        ...urls.map((url) => ({ type: "image_url", image_url: { url } })),
      ],
    },
  ],
});

function median(run: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < iterations + 20; i++) {
    const started = performance.now();
    run();
    if (i >= 20) times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[times.length >> 1]!;
}

const cases: [string, string[]][] = [
  ["1 image, URL", ["https://example.com/cat.png"]],
  ["8 images, URL", Array.from({ length: 8 }, (_, i) => `https://example.com/${i}.png`)],
  ["1 image, 64 KB data URL", [dataUrl(64, 1)]],
  ["8 images, 64 KB data URLs", Array.from({ length: 8 }, (_, i) => dataUrl(64, i))],
  ["1 image, 1 MB data URL", [dataUrl(1024, 1)]],
];

const rows = cases.map(([name, urls]) => {
  const producer = definition.create(
    definition.parameters.parse({}),
    makeEnv("mm"),
  ) as MmEmbeddingsCacheProducer;
  const body = chat(urls);
  const warm = makeContext({ body, path: "/v1/chat/completions" });
  producer.produce(warm, endpoints);
  const picked: SchedulingResult = {
    primaryProfileName: "default",
    profileResults: new Map([["default", { targetEndpoints: [endpoints[0]!], scored: [] }]]),
  };
  producer.preRequest(warm, picked);
  producer.onFirstToken(warm);
  const ms = median(() => producer.produce(makeContext({ body, path: "/v1/chat/completions" }), endpoints));
  return {
    request: name,
    "body KB": Math.round(JSON.stringify(body).length / 1024),
    "produce ms (median)": ms.toFixed(4),
  };
});
console.log(`mm-embeddings-cache-producer over ${endpoints.length} endpoints, medians of ${iterations}`);
console.table(rows);
