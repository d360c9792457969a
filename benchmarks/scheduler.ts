/**
 * `npm run bench -- scheduler [--smoke] [--path=text|tokens] [--shape=chat|completion]
 * [--tokens=1024|32768|200000]`: wall time
 * of one scheduling decision over 16 endpoints with the real Scheduler and llm-d's token-aware
 * recipe (approx prefix producer + in-flight load producer → prefix-cache-affinity-filter →
 * prefix-cache-scorer + token-load-scorer + active-request-scorer → max-score-picker), for
 * prompts of 1K, 32K and 200K tokens. Every prompt extends a prefix one endpoint already holds
 * (agentic multi-turn shape), so matches walk the full prefix.
 *
 * Paths (both by default, side by side): `text`, the router's hot path, where the prefix producer
 * hashes the prompt text and nothing tokenizes; `tokens`, where the prompt is
 * tokenized first (as with a `token-producer` in the config) and token blocks are hashed.
 * Shapes: `chat`, the prompt rendered from messages as the gateway does (a lazily concatenated
 * string, whose first read copies it flat: the text path hashes the message strings in place
 * instead, the tokens path pays the copy), and `completion`, a flat string as JSON.parse returns. A second table times the hot-path components alone against
 * the simple alternatives (byte-wise FNV tokenizer, xxhash-wasm block hashing).
 * With `NODE_OPTIONS=--expose-gc`, a GC runs between iterations (untimed), so the harness's own
 * 800 KB prompt strings do not bill their collection to the decision that follows.
 */
import xxhash from "xxhash-wasm";
import { renderChat } from "../src/api/prompt.ts";
import { ManualClock } from "../src/core/clock.ts";
import type { Endpoint } from "../src/endpoints/endpoint.ts";
import { hashPrefixBlocks, hashTextBlocks } from "../src/kv-index/index.ts";
import { Scheduler } from "../src/scheduler/framework/scheduler.ts";
import { makeContext, makeEndpoint, makeEnv } from "../src/scheduler/framework/testing.ts";
import type {
  DataProducer,
  Filter,
  Picker,
  PreRequest,
  ProfileHandler,
  SchedulingRequest,
  SchedulingResult,
  Scorer,
} from "../src/scheduler/framework/types.ts";
import { definition as activeRequest } from "../src/scheduler/plugins/active-request-scorer/index.ts";
import {
  type ApproxPrefixCacheProducer,
  definition as approxPrefix,
} from "../src/scheduler/plugins/approx-prefix-cache-producer/index.ts";
import { definition as inflight } from "../src/scheduler/plugins/inflight-load-producer/index.ts";
import { definition as maxScorePicker } from "../src/scheduler/plugins/max-score-picker/index.ts";
import { definition as affinityFilter } from "../src/scheduler/plugins/prefix-cache-affinity-filter/index.ts";
import { definition as prefixScorer } from "../src/scheduler/plugins/prefix-cache-scorer/index.ts";
import { definition as singleProfile } from "../src/scheduler/plugins/single-profile-handler/index.ts";
import { instantiate } from "../src/scheduler/plugins/testing.ts";
import { definition as tokenLoad } from "../src/scheduler/plugins/token-load-scorer/index.ts";
import { defaultTokenizer } from "../src/tokenizer/tokenizer.ts";

const ENDPOINTS = 16;
const collect = (globalThis as { gc?: () => void }).gc;
const smoke = process.argv.includes("--smoke");
const option = (name: string, values: string[]) => {
  const given = process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
  return given ? values.filter((v) => v === given) : values;
};
const paths = option("path", ["text", "tokens"]);
const shapes = option("shape", ["chat", "completion"]);
const allSizes = [
  { tokens: 1024, maxPrefixTokensToMatch: 131072, iterations: 2000 },
  { tokens: 32768, maxPrefixTokensToMatch: 131072, iterations: 500 },
  { tokens: 200_000, maxPrefixTokensToMatch: 131072, iterations: 300 },
  { tokens: 200_000, maxPrefixTokensToMatch: 262144, iterations: 300 },
];
const tokenSizes = option("tokens", [...new Set(allSizes.map((s) => String(s.tokens)))]);
const sizes = smoke
  ? [{ tokens: 1024, maxPrefixTokensToMatch: 131072, iterations: 50 }]
  : allSizes.filter((s) => tokenSizes.includes(String(s.tokens)));

/** The scheduler, and its prefix producer (whose index applies the insert when settled). */
function buildScheduler(maxPrefixTokensToMatch: number) {
  const env = (name: string) => makeEnv(name, {}, new ManualClock());
  const prefix = instantiate<ApproxPrefixCacheProducer>(
    approxPrefix,
    { maxPrefixTokensToMatch },
    env("approx-prefix-cache-producer"),
  );
  const load = instantiate<DataProducer & PreRequest>(inflight, {}, env("inflight-load-producer"));
  const profile = {
    name: "default",
    filters: [instantiate<Filter>(affinityFilter, {}, env("prefix-cache-affinity-filter"))],
    scorers: [
      { scorer: instantiate<Scorer>(prefixScorer, {}, env("prefix-cache-scorer")), weight: 2 },
      { scorer: instantiate<Scorer>(tokenLoad, {}, env("token-load-scorer")), weight: 1 },
      { scorer: instantiate<Scorer>(activeRequest, {}, env("active-request-scorer")), weight: 1 },
    ],
    picker: instantiate<Picker>(maxScorePicker, {}, env("max-score-picker")),
  };
  const scheduler = new Scheduler({
    profileHandler: instantiate<ProfileHandler>(singleProfile, {}, env("single-profile-handler")),
    profiles: new Map([["default", profile]]),
    headerProcessors: [],
    screeners: [],
    producers: [prefix, load],
    preRequests: [prefix, load],
    responseHooks: [],
  });
  return { scheduler, prefix };
}

/** Deterministic filler text of `chars` characters, distinct per `seed`. */
function text(chars: number, seed: number): string {
  const unit = `conversation ${seed} turn text with tools and code; `;
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}

/** The request of turn `turn` over `history`, as the gateway hands it to the scheduler. */
function request(shape: string, history: string, turn: number): Partial<SchedulingRequest> {
  const question = text(400, 1000 + turn);
  if (shape === "chat") {
    const messages = [
      { role: "system", content: history },
      { role: "user", content: question },
    ];
    return { path: "/v1/chat/completions", promptText: renderChat(messages), body: { messages } };
  }
  const flat = history + question;
  flat.charCodeAt(0); // JSON.parse returns flat strings; flatten outside the timing
  return { path: "/v1/completions", promptText: flat, body: { prompt: flat } };
}

type Timings = Record<"tokenize" | "decide" | "insert" | "total", number[]>;

/**
 * Untimed: collects the harness's garbage, then yields 2 ms so V8's background sweeping is done
 * before the next timed section instead of competing with it for the CPU.
 */
async function settle(): Promise<void> {
  if (!collect) return;
  collect();
  await new Promise((resolve) => setTimeout(resolve, 2));
}

async function runSize(path: string, shape: string, size: (typeof sizes)[number]): Promise<Timings> {
  const { scheduler, prefix } = buildScheduler(size.maxPrefixTokensToMatch);
  const endpoints: Endpoint[] = Array.from({ length: ENDPOINTS }, (_, i) => makeEndpoint(`pod-${i}`));
  const histories = Array.from({ length: ENDPOINTS * 2 }, (_, i) => text(size.tokens * 4 - 400, i));
  const t: Timings = { tokenize: [], decide: [], insert: [], total: [] };
  const warmup = Math.min(50, size.iterations);
  for (let i = 0; i < size.iterations + warmup; i++) {
    const ctx = makeContext({ ...request(shape, histories[i % histories.length]!, i), model: "m" });
    await settle();
    const t0 = performance.now();
    if (path === "tokens") ctx.request.tokens = defaultTokenizer.encode(ctx.request.promptText);
    const t1 = performance.now();
    scheduler.prepare(ctx, endpoints);
    const result = scheduler.schedule(ctx, endpoints) as SchedulingResult;
    const t2 = performance.now();
    scheduler.preRequest(ctx, result);
    // The producer leaves its insert for a timer after dispatch; timed here, where it runs.
    prefix.index.settle();
    const t3 = performance.now();
    scheduler.complete(ctx, result.profileResults.get("default")!.targetEndpoints[0]!, "natural", undefined);
    if (i < warmup) continue;
    t.tokenize.push(t1 - t0);
    t.decide.push(t2 - t1);
    t.insert.push(t3 - t2);
    t.total.push(t3 - t0);
  }
  return t;
}

function stats(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  return `${at(0.5).toFixed(3)} / ${at(0.99).toFixed(3)} / ${mean.toFixed(3)}`;
}

console.log(
  `scheduling decision over ${ENDPOINTS} endpoints, ms as p50 / p99 / mean (node ${process.version}, ` +
    `gc between runs: ${collect ? "yes" : "no"})`,
);
const rows = [];
for (const size of sizes) {
  for (const path of paths) {
    for (const shape of shapes) {
      const t = await runSize(path, shape, size);
      rows.push({
        "prompt tokens": size.tokens,
        "match cap": size.maxPrefixTokensToMatch,
        path,
        shape,
        tokenize: stats(t.tokenize),
        "decision (producers+filter+scorers+picker)": stats(t.decide),
        "preRequest insert": stats(t.insert),
        "all together": stats(t.total),
      });
    }
  }
}
console.table(rows);

const { h64Raw } = await xxhash();

/** The tokenizer's previous inner loop (byte-wise FNV, one bound check per character), for comparison. */
function legacyEncode(prompt: string): Uint32Array {
  const out = new Uint32Array(Math.ceil(prompt.length / 4));
  for (let t = 0, i = 0; t < out.length; t++) {
    let h = 0x811c9dc5;
    for (const end = Math.min(i + 4, prompt.length); i < end; i++) {
      h = Math.imul(h ^ prompt.charCodeAt(i), 0x01000193);
    }
    out[t] = h >>> 0;
  }
  return out;
}

/** The previous block hasher: xxhash64 (wasm) per block of token bytes, chained by a second call. */
function xxhashTokenBlocks(tokens: Uint32Array, blockSizeTokens: number, maxBlocks: number): Float64Array {
  const n = Math.min(maxBlocks, Math.ceil(tokens.length / blockSizeTokens));
  const keys = new Float64Array(n);
  const bytes = new Uint8Array(tokens.buffer, tokens.byteOffset, tokens.length * 4);
  const chain = new DataView(new ArrayBuffer(16));
  const chainBytes = new Uint8Array(chain.buffer);
  for (let i = 0; i < n; i++) {
    const start = i * blockSizeTokens * 4;
    chain.setBigUint64(0, h64Raw(bytes.subarray(start, start + blockSizeTokens * 4)), true);
    chain.setBigUint64(8, h64Raw(chainBytes), true);
    keys[i] = chain.getUint32(8, true);
  }
  return keys;
}

/** p50 / p99 / mean of `run` over fresh 4-chars-per-token prompts of `tokens` tokens. */
async function timeComponent(
  tokens: number,
  run: (prompt: string, promptTokens: Uint32Array, body: Buffer) => unknown,
): Promise<string> {
  const prompts = Array.from(
    { length: 8 },
    (_, i) => request("completion", text(tokens * 4 - 400, i), i).promptText!,
  );
  const encoded = prompts.map((p) => defaultTokenizer.encode(p));
  const bodies = prompts.map((p) => Buffer.from(JSON.stringify({ model: "m", prompt: p })));
  const times: number[] = [];
  for (let i = 0; i < (smoke ? 20 : 300); i++) {
    await settle();
    const t0 = performance.now();
    run(prompts[i % prompts.length]!, encoded[i % prompts.length]!, bodies[i % prompts.length]!);
    times.push(performance.now() - t0);
  }
  return stats(times.slice(smoke ? 5 : 50));
}

const componentTokens = smoke ? 1024 : 200_000;
const BLOCK = 64;
const CAP_BLOCKS = 131072 / BLOCK;
/** 32K token ids (128 KB, cache-resident): hashed 8 times, ≈ 0.2 ms of fixed work. */
const CONTROL_TOKENS = new Uint32Array(32768).map((_, i) => Math.imul(i, 0x9e3779b1));
console.log(
  `hot-path components alone at ${componentTokens} tokens (flat text), ${BLOCK}-token blocks, ` +
    `≤ ${CAP_BLOCKS} blocks hashed; ms as p50 / p99 / mean`,
);
console.table({
  "tokenize: previous byte-wise FNV loop": await timeComponent(componentTokens, (p) => legacyEncode(p)),
  "tokenize: CharChunkTokenizer.encode (same ids)": await timeComponent(componentTokens, (p) =>
    defaultTokenizer.encode(p),
  ),
  "hash token blocks: previous xxhash64 (wasm)": await timeComponent(componentTokens, (_, t) =>
    xxhashTokenBlocks(t, BLOCK, CAP_BLOCKS),
  ),
  "hash token blocks: hashPrefixBlocks": await timeComponent(componentTokens, (_, t) =>
    hashPrefixBlocks(t, BLOCK, CAP_BLOCKS, 1),
  ),
  "hash text blocks: hashTextBlocks (no tokenizing)": await timeComponent(componentTokens, (p) =>
    hashTextBlocks(p, BLOCK, CAP_BLOCKS, 1),
  ),
  "first read of a concatenated prompt (flatten copy)": await timeComponent(componentTokens, (p) =>
    `${p} `.charCodeAt(0),
  ),
  "control: identical in-cache work every run (the machine's own noise)": await timeComponent(
    componentTokens,
    () => {
      for (let i = 0; i < 8; i++) hashPrefixBlocks(CONTROL_TOKENS, BLOCK, CAP_BLOCKS, i);
    },
  ),
  "for scale, the gateway's body parse (utf8 decode + JSON.parse)": await timeComponent(
    componentTokens,
    (_p, _t, body) => JSON.parse(body.toString("utf8")),
  ),
});
