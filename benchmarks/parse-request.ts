/**
 * `npm run bench -- parse-request [--kb 800] [--iterations 200]`: what the router pays to parse
 * one request body, for a short completion, an `--kb` completion prompt, an `--kb` chat of 40
 * messages and a completion prompt of 200K token ids: `JSON.parse` of the decoded body (the router's parse before src/api/json-bytes.ts),
 * `parseJsonBytes` (long plain strings left as the body's bytes, decoded only when read) and the
 * whole `parseInferenceRequest` (JSON, checks, the prompt as pieces; nothing long is decoded).
 * Then an answer's usage: `findUsage`
 * whole, `plainUsageAt` (the read from the bytes, src/gateway/usage-bytes.ts) and `JSON.parse` of
 * the same usage object (what that read replaces). Medians; with `NODE_OPTIONS=--expose-gc` a GC
 * runs between iterations, untimed.
 */
import { parseArgs } from "node:util";
import { parseJsonBytes } from "../src/api/json-bytes.ts";
import { parseInferenceRequest } from "../src/gateway/parse-request.ts";
import { findUsage } from "../src/gateway/usage.ts";
import { plainUsageAt } from "../src/gateway/usage-bytes.ts";

const { values } = parseArgs({
  options: { kb: { type: "string", default: "800" }, iterations: { type: "string", default: "200" } },
});
const bytes = Number(values.kb) * 1024;
const iterations = Number(values.iterations);
const collect = (globalThis as { gc?: () => void }).gc;

const filler = (n: number, seed: number) =>
  `turn ${seed}: ${"lorem ipsum dolor sit amet, ".repeat(n / 28 + 1)}`.slice(0, n);
const messages = Array.from({ length: 40 }, (_, i) => ({
  role: i % 2 ? "assistant" : "user",
  content: filler(bytes / 40, i),
}));
const bodies = [
  { name: "completion, short", path: "/v1/completions", body: { model: "m", prompt: "hi 1", max_tokens: 1 } },
  {
    name: `completion, ${values.kb} KB prompt`,
    path: "/v1/completions",
    body: { model: "m", prompt: `hi 1 ${"x".repeat(bytes)}`, max_tokens: 1 },
  },
  {
    name: `chat, ${values.kb} KB in 40 messages`,
    path: "/v1/chat/completions",
    body: { model: "m", messages },
  },
  {
    name: "completion, 200K token ids",
    path: "/v1/completions",
    body: {
      model: "m",
      prompt: Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 128_000),
      max_tokens: 1,
    },
  },
];

/** Median ms of one `parse`; a short body is parsed in batches of ~64 KB so the clock can see it. */
function median(parse: () => unknown, bodyBytes: number): number {
  const batch = Math.max(1, Math.floor(65536 / bodyBytes));
  const times: number[] = [];
  for (let i = 0; i < iterations + 20; i++) {
    collect?.();
    const started = performance.now();
    for (let j = 0; j < batch; j++) parse();
    if (i >= 20) times.push((performance.now() - started) / batch);
  }
  return times.sort((a, b) => a - b)[times.length >> 1] as number;
}

const rows = bodies.map(({ name, path, body }) => {
  const raw = Buffer.from(JSON.stringify(body));
  const jsonParse = median(() => JSON.parse(raw.toString("utf8")), raw.length);
  const bytesParse = median(() => parseJsonBytes(raw), raw.length);
  return {
    body: name,
    bytes: raw.length,
    "JSON.parse ms": jsonParse.toFixed(3),
    "parseJsonBytes ms": bytesParse.toFixed(3),
    speed: `${(jsonParse / bytesParse).toFixed(2)}×`,
    "parseInferenceRequest ms": median(() => parseInferenceRequest(path, {}, raw), raw.length).toFixed(3),
  };
});
console.log(
  `request body parsing, medians of ${iterations} (${collect ? "GC between runs" : "no forced GC"})`,
);
console.table(rows);

/** A `llmd sim` answer to `max_tokens: 1` (as in request-path.ts) and its usage object's bytes. */
const answer = Buffer.from(
  JSON.stringify({
    id: "cmpl-0123456789abcdef",
    object: "text_completion",
    created: 1764614400,
    model: "m",
    choices: [{ index: 0, text: " x", logprobs: null, finish_reason: "length", stop_reason: null }],
    usage: { prompt_tokens: 3, total_tokens: 4, completion_tokens: 1, prompt_tokens_details: null },
  }),
);
const usageStart = answer.lastIndexOf('{"prompt_tokens"');
const usageEnd = answer.indexOf("}", usageStart) + 1;
const micros = (ms: number) => (ms * 1000).toFixed(2);
console.log("\nan answer's usage, medians in µs");
console.table([
  {
    answer: `${answer.length} B`,
    "findUsage µs": micros(median(() => findUsage(answer), answer.length)),
    "plainUsageAt µs": micros(median(() => plainUsageAt(answer, usageStart, usageEnd), answer.length)),
    "JSON.parse of the usage object µs": micros(
      median(() => JSON.parse(answer.toString("utf8", usageStart, usageEnd)), answer.length),
    ),
  },
]);
