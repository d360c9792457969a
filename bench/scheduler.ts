/**
 * `npm run bench -- scheduler [--smoke]`: wall time of one scheduling decision over 16 endpoints
 * with the real Scheduler and llm-d's token-aware recipe (approx prefix producer + in-flight load
 * producer → prefix-cache-affinity-filter → prefix-cache-scorer + token-load-scorer +
 * active-request-scorer → max-score-picker), for prompts of 1K, 32K and 200K tokens.
 * Columns: tokenization alone, the decision (producers + filter + scorers + picker; tokens given),
 * the optimistic insert at PreRequest, and all three together. Every prompt extends a prefix one
 * endpoint already holds (agentic multi-turn shape), so matches walk the full prefix.
 * With `NODE_OPTIONS=--expose-gc`, a GC runs between iterations (untimed), so the harness's own
 * 800 KB prompt strings do not bill their collection to the decision that follows.
 */
import { ManualClock } from "../src/core/clock.ts";
import type { Endpoint } from "../src/endpoints/endpoint.ts";
import { Scheduler } from "../src/scheduler/framework/scheduler.ts";
import { makeContext, makeEndpoint, makeEnv } from "../src/scheduler/framework/testing.ts";
import type {
  DataProducer,
  Filter,
  Picker,
  PreRequest,
  ProfileHandler,
  Scorer,
  SchedulingResult,
} from "../src/scheduler/framework/types.ts";
import { definition as activeRequest } from "../src/scheduler/plugins/active-request-scorer/index.ts";
import { definition as approxPrefix } from "../src/scheduler/plugins/approx-prefix-cache-producer/index.ts";
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
const sizes: { tokens: number; maxPrefixTokensToMatch: number; iterations: number }[] = smoke
  ? [{ tokens: 1024, maxPrefixTokensToMatch: 131072, iterations: 50 }]
  : [
      { tokens: 1024, maxPrefixTokensToMatch: 131072, iterations: 2000 },
      { tokens: 32768, maxPrefixTokensToMatch: 131072, iterations: 500 },
      { tokens: 200_000, maxPrefixTokensToMatch: 131072, iterations: 200 },
      { tokens: 200_000, maxPrefixTokensToMatch: 262144, iterations: 200 },
    ];

function buildScheduler(maxPrefixTokensToMatch: number) {
  const env = (name: string) => makeEnv(name, {}, new ManualClock());
  const prefix = instantiate<DataProducer & PreRequest>(
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
  return new Scheduler({
    profileHandler: instantiate<ProfileHandler>(singleProfile, {}, env("single-profile-handler")),
    profiles: new Map([["default", profile]]),
    headerProcessors: [],
    producers: [prefix, load],
    preRequests: [prefix, load],
    responseHooks: [],
  });
}

/** Deterministic filler text of `chars` characters, distinct per `seed`. */
function text(chars: number, seed: number): string {
  const unit = `conversation ${seed} turn text with tools and code; `;
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}

interface Timings {
  tokenize: number[];
  decide: number[];
  insert: number[];
  total: number[];
}

function runSize(tokens: number, maxPrefixTokensToMatch: number, iterations: number): Timings {
  const scheduler = buildScheduler(maxPrefixTokensToMatch);
  const endpoints: Endpoint[] = Array.from({ length: ENDPOINTS }, (_, i) => makeEndpoint(`pod-${i}`));
  const histories = Array.from({ length: ENDPOINTS * 2 }, (_, i) => text(tokens * 4 - 400, i));
  const t: Timings = { tokenize: [], decide: [], insert: [], total: [] };
  const warmup = Math.min(50, iterations);
  for (let i = 0; i < iterations + warmup; i++) {
    const promptText = histories[i % histories.length]! + text(400, 1000 + i);
    const ctx = makeContext({ promptText, model: "bench-model" });
    collect?.();
    const t0 = performance.now();
    if (process.argv.includes("--tokens")) ctx.request.tokens = defaultTokenizer.encode(promptText);
    const t1 = performance.now();
    scheduler.prepare(ctx, endpoints);
    const result = scheduler.schedule(ctx, endpoints) as SchedulingResult;
    const t2 = performance.now();
    scheduler.preRequest(ctx, result);
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
const rows = sizes.map(({ tokens, maxPrefixTokensToMatch, iterations }) => {
  const t = runSize(tokens, maxPrefixTokensToMatch, iterations);
  return {
    "prompt tokens": tokens,
    "match cap (tokens)": maxPrefixTokensToMatch,
    runs: iterations,
    tokenize: stats(t.tokenize),
    "decision (producers+filter+scorers+picker)": stats(t.decide),
    "preRequest insert": stats(t.insert),
    "all together": stats(t.total),
  };
});
console.table(rows);
