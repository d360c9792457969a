/**
 * `npm run bench -- responses [--turns=100] [--tokens=200000] [--iterations=200]`: what a chained
 * Responses turn costs the router, stage by stage, against the same turn sent as a full-history
 * chat request. The chain lives in a real SQLite store (`turns` responses whose history adds up to
 * `tokens`); scheduling is the default config's (`examples/configs/default.yaml`) over 16
 * endpoints, one of which holds the chain's prefix.
 *
 * Responses turn: rehydrate (one response lookup, then the router's chain cache checked against the
 * store with an index-only count, or one bulk item read when the chain is not cached) → build (the
 * upstream chat body, spliced from the cached JSON, and the prompt text) → schedule (producers,
 * profiles, pre-request, complete).
 * Chat turn: parse (the client's full-history body: JSON.parse + prompt rendering) → schedule.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderChat } from "../src/api/prompt.ts";
import { itemsToMessages, outputMessage, type ResponseItem } from "../src/api/responses.ts";
import { loadConfig } from "../src/config/index.ts";
import { ManualClock } from "../src/core/clock.ts";
import { parseInferenceRequest } from "../src/gateway/parse-request.ts";
import { placeRequest } from "../src/lifecycle/placement.ts";
import { openSqliteStore } from "../src/responses/sqlite-store.ts";
import type { StoredItem } from "../src/responses/store.ts";
import { ChainCache, EMPTY_CHAIN, extendChain, sameIds } from "../src/responses/chain-cache.ts";
import { upstreamRequest } from "../src/responses/upstream.ts";
import { makeEndpoint } from "../src/scheduler/framework/testing.ts";
import type { SchedulingRequest } from "../src/scheduler/framework/types.ts";

const arg = (name: string, fallback: number) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
const TURNS = arg("turns", 100);
const TOKENS = arg("tokens", 200_000);
const ITERATIONS = arg("iterations", 200);
const MODEL = "bench-model";

const clock = new ManualClock(1000);
const config = loadConfig(
  readFileSync(new URL("../examples/configs/default.yaml", import.meta.url), "utf8"),
  {
    clock,
  },
);
const endpoints = Array.from({ length: 16 }, (_, i) =>
  makeEndpoint(`e${i}`, { metrics: { cacheBlockSize: 16, cacheNumBlocks: 100_000, updatedAtMs: 1000 } }),
);

/** Text of `chars` characters that no other turn shares. */
const words = (turn: number, chars: number) =>
  `turn ${turn}: ${"lorem ipsum dolor ".repeat(Math.ceil(chars / 18))}`.slice(0, chars);

/** The chain as stored items: a user message and an assistant answer per turn. */
function chainItems(): StoredItem[] {
  const perTurn = Math.floor((TOKENS * 4) / TURNS / 2);
  return Array.from({ length: TURNS }, (_, t) => [
    { id: `item_u${t}`, item: { type: "message", role: "user", content: words(t, perTurn) } as ResponseItem },
    { id: `item_a${t}`, item: outputMessage(`item_a${t}`, words(t + TURNS, perTurn)) },
  ]).flat();
}

function schedulingRequest(
  promptText: string,
  body: Record<string, unknown>,
  bytes: number,
): SchedulingRequest {
  return {
    requestId: "r",
    model: MODEL,
    path: "/v1/chat/completions",
    headers: {},
    promptText,
    body,
    bodyBytes: bytes,
    priority: 0,
    fairnessId: "default-flow",
    attributes: new Map(),
  };
}

/** Runs the scheduler for `request` and completes it (the router's per-turn scheduling work). */
function schedule(request: SchedulingRequest): void {
  const placement = placeRequest(config.scheduler, { request, state: new Map(), clock }, endpoints);
  if (placement instanceof Promise || placement instanceof Error) throw new Error("unexpected placement");
  config.scheduler.complete(placement.ctx, placement.target, "natural", undefined);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

const dir = mkdtempSync(join(tmpdir(), "llmd-bench-responses-"));
const store = openSqliteStore(join(dir, "r.sqlite"));
const items = chainItems();
await store.put(
  {
    response: { id: "resp_chain", created_at: Math.floor(Date.now() / 1000) } as never,
    tenant: "",
    inputItemIds: ["item_u0"],
    chainItemIds: items.map((i) => i.id),
    expiresAtMs: Date.now() + 3600_000,
  },
  items,
);
const newInput: ResponseItem = { type: "message", role: "user", content: words(TURNS, 8000) };
const fullHistory = [...items.map((i) => i.item), newInput];
const chatBody = Buffer.from(
  JSON.stringify({
    model: MODEL,
    messages: itemsToMessages(null, fullHistory),
    max_tokens: 256,
    stream: true,
  }),
);
// Warm the prefix index: the chain's endpoint has seen the history.
schedule(schedulingRequest(renderChat(itemsToMessages(null, fullHistory)), {}, chatBody.length));

const cache = new ChainCache(256 * 1024 * 1024);

/** One chained turn as the router serves it; `cached`: the chain cache holds the previous chain. */
async function responsesTurn(
  cached: boolean,
  out: Record<"rehydrate" | "build" | "schedule" | "total", number[]>,
) {
  const t0 = performance.now();
  const previous = await store.get("resp_chain", "");
  const ids = previous!.chainItemIds;
  let chain = cached ? cache.get("resp_chain") : undefined;
  if (!chain || !sameIds(chain.itemIds, ids) || (await store.countItems(ids)) !== ids.length) {
    const history = await store.items(ids);
    chain = extendChain(
      EMPTY_CHAIN,
      history.map((h) => h.id),
      history.map((h) => h.item),
    );
    if (cached) cache.set("resp_chain", chain);
  }
  const t1 = performance.now();
  const turn = extendChain(chain, ["item_new"], [newInput]);
  const upstream = upstreamRequest("chat", {
    model: MODEL,
    instructions: null,
    chain: turn,
    stream: true,
    maxOutputTokens: 256,
    temperature: null,
    passthrough: {},
  });
  const promptText = renderChat(upstream.messages);
  const t2 = performance.now();
  schedule(schedulingRequest(promptText, upstream.body, upstream.json.length));
  const t3 = performance.now();
  out.rehydrate.push(t1 - t0);
  out.build.push(t2 - t1);
  out.schedule.push(t3 - t2);
  out.total.push(t3 - t0);
}

const samples = () => ({
  rehydrate: [] as number[],
  build: [] as number[],
  schedule: [] as number[],
  total: [] as number[],
});
const warm = samples();
const cold = samples();
const chat = { parse: [] as number[], schedule: [] as number[], total: [] as number[] };
for (let i = 0; i < ITERATIONS; i++) {
  await responsesTurn(true, warm);
  await responsesTurn(false, cold);
  const c0 = performance.now();
  const parsed = parseInferenceRequest("/v1/chat/completions", {}, chatBody);
  if (parsed instanceof Error) throw parsed;
  void parsed.promptText.length;
  const c1 = performance.now();
  schedule(parsed);
  const c2 = performance.now();
  chat.parse.push(c1 - c0);
  chat.schedule.push(c2 - c1);
  chat.total.push(c2 - c0);
}
await store.close();
rmSync(dir, { recursive: true, force: true });

const row = (path: string, stage: string, samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    path,
    stage,
    "p50 ms": percentile(sorted, 0.5).toFixed(2),
    "p99 ms": percentile(sorted, 0.99).toFixed(2),
  };
};
console.log(
  `chain: ${TURNS} turns, ~${TOKENS} tokens (${(chatBody.length / 1024).toFixed(0)} KB as a chat body); ${ITERATIONS} iterations\n`,
);
console.table([
  ...(["rehydrate", "build", "schedule", "total"] as const).map((stage) =>
    row("responses, chain cached", stage, warm[stage]),
  ),
  ...(["rehydrate", "build", "schedule", "total"] as const).map((stage) =>
    row("responses, from the store", stage, cold[stage]),
  ),
  row("chat (full history)", "parse", chat.parse),
  row("chat (full history)", "schedule", chat.schedule),
  row("chat (full history)", "total", chat.total),
]);
