/**
 * `npm run bench -- kv-events [--smoke] [--blocks=400000] [--endpoints=64] [--no-tokenize-turn]`:
 * what the engines' KV events cost the router (issue #16).
 *
 * 1. Ingest: block events per CPU-second of one core into the precise index
 *    (src/kv-index/precise-index.ts), for vLLM's shapes: prefill batches (32 blocks per
 *    BlockStored), decode (one block per event), engine blocks of 16 tokens under 64-token request
 *    blocks (tails carried across events), removals, and the subscriber's whole per-batch path
 *    (msgpack decode of positional events + apply), spread over `--endpoints` pods with the index
 *    held within a 256 MiB budget. CPU time is `process.cpuUsage` (user + system) around the
 *    loop; events are built before it starts. ZeroMQ's own I/O thread is not included.
 * 2. Scheduling: CPU per decision of the real scheduler with examples/configs/precise.yaml at
 *    `--endpoints` endpoints, each holding 256K tokens of conversations; the prompt is one endpoint's
 *    newest conversation, its tokens given (the index path alone) or as text that the producer
 *    tokenizes with the router's estimate tokenizer. "Never seen" decides prompts no endpoint holds
 *    (the match stops at their first block; the speculative entries key the whole prompt, CBOR-FNV
 *    for every block). "First sight" decides each held prompt once (the first decision over its
 *    tokens: its keys come from what the index derived from the events); in the others each is
 *    decided again and again, as a conversation's next turn shares the blocks of the last.
 *    "Tokens given as a fresh copy, held by its leading ids" is that prompt as the gateway takes a
 *    completions prompt of token ids: a new array each time, which `HeldIdPrompts` finds held.
 *    Also the CPU a token of the index's two per-block hashes (benchmarks/kv-events/key-cost.ts),
 *    the longest single insert while a `KeyTable` grows to 4M keys (its doublings are drained
 *    by later writes, so none pauses the event loop for the whole table), and the garbage
 *    collector's pauses while the scheduling indexes (about 1M engine blocks of 16 tokens under
 *    64-token request blocks at 64 endpoints) are built and decided on.
 * 3. `runTokenizeTurn` from benchmarks/tokenize-turn.ts (a real tokenizer on a 200K-token chat turn).
 */
import { Encoder } from "@msgpack/msgpack";
import { loadConfig } from "../src/config/index.ts";
import { decodeBatch } from "../src/kv-events/decode.ts";
import { type IndexKvEvent, PreciseIndex } from "../src/kv-index/index.ts";
import { KeyTable } from "../src/kv-index/key-table.ts";
import { makeContext, makeEndpoint } from "../src/scheduler/framework/testing.ts";
import type { SchedulingResult } from "../src/scheduler/framework/types.ts";
import type { PrecisePrefixCacheProducer } from "../src/scheduler/plugins/precise-prefix-cache-producer/index.ts";
import { HeldIdPrompts } from "../src/tokenizer/id-prompts.ts";
import { defaultTokenizer } from "../src/tokenizer/tokenizer.ts";
import { runTokenizeTurn, tokenizeTurnTable } from "./tokenize-turn.ts";
import { watchGc } from "./kv-events/gc-pauses.ts";
import { keyCostRows } from "./kv-events/key-cost.ts";
import { conversationStored, cpuMicros, ENGINE_BLOCK } from "./kv-events/held-conversation.ts";
import { tokenStream } from "./kv-events/token-stream.ts";

const HELD_IDS = "tokens given as a fresh copy, held by its leading ids";

const smoke = process.argv.includes("--smoke");
const option = (name: string, fallback: number) => {
  const given = process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1];
  return given ? Number(given) : fallback;
};
const BLOCKS = smoke ? 20_000 : option("blocks", 400_000);
const ENDPOINTS = option("endpoints", 64);
const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
const BUDGET = 256 * 1024 ** 2;
/** Tokens each endpoint holds in the scheduling benchmark (an 8B model's KV on one H200 is ~0.5M). */
const HELD_TOKENS = 262_144;

interface Batch {
  pod: string;
  events: IndexKvEvent[];
  blocks: number;
}

/** `blocks` stored blocks as chains of 256 blocks per conversation, `perEvent` blocks per BlockStored, round-robin over the pods. */
function storedBatches(blocks: number, perEvent: number): Batch[] {
  const out: Batch[] = [];
  const chain = 256;
  for (let c = 0; c * chain < blocks; c++) {
    const tokens = tokenStream(c + 1, chain * ENGINE_BLOCK);
    const pod = `default/pod-${c % ENDPOINTS}`;
    const base = BigInt(c) << 20n;
    for (let b = 0; b < chain && c * chain + b < blocks; b += perEvent) {
      const n = Math.min(perEvent, chain - b);
      out.push({
        pod,
        blocks: n,
        events: [
          {
            type: "BlockStored",
            blockHashes: Array.from({ length: n }, (_, i) => base + BigInt(b + i)),
            parentBlockHash: b === 0 ? null : base + BigInt(b - 1),
            tokenIds: tokens.subarray(b * ENGINE_BLOCK, (b + n) * ENGINE_BLOCK),
            blockSize: ENGINE_BLOCK,
            lora: null,
            medium: "GPU",
          },
        ],
      });
    }
  }
  return out;
}

/** The removals of every block `stored` added, 32 per event. */
function removalBatches(stored: readonly Batch[]): Batch[] {
  return stored.map(({ pod, events, blocks }) => {
    const e = events[0] as Extract<IndexKvEvent, { type: "BlockStored" }>;
    return { pod, blocks, events: [{ type: "BlockRemoved", blockHashes: e.blockHashes, medium: "GPU" }] };
  });
}

function ingestRow(name: string, blocks: number, events: number, micros: number, index: PreciseIndex) {
  return {
    case: name,
    "block events": blocks,
    "blocks / CPU-s": Math.round(blocks / (micros / 1e6)),
    "µs / block": +(micros / blocks).toFixed(2),
    "µs / event": +(micros / events).toFixed(2),
    "index MiB": +(index.stats().bytes / 1024 ** 2).toFixed(1),
  };
}

function newIndex(blockSizeTokens: number): PreciseIndex {
  return new PreciseIndex({ blockSizeTokens, maxBytes: BUDGET, speculativeTtlMs: 2000 });
}

function applyAll(index: PreciseIndex, batches: readonly Batch[]): void {
  for (const b of batches) index.apply(b.events, b.pod, MODEL, 0);
}

/** The ingest row of applying `batches` (of `BLOCKS` blocks) to `index`, timed. */
function appliedRow(name: string, index: PreciseIndex, batches: readonly Batch[]) {
  return ingestRow(
    name,
    BLOCKS,
    batches.length,
    cpuMicros(() => applyAll(index, batches)),
    index,
  );
}

function ingest(): Record<string, string | number>[] {
  const rows = [];
  const prefill = storedBatches(BLOCKS, 32);
  // One index at a time: each is dropped (reassigned) before the next row's run.
  let index = newIndex(16);
  rows.push(appliedRow("prefill: 32 blocks per BlockStored", index, prefill));
  rows.push(appliedRow("BlockRemoved, 32 blocks per event", index, removalBatches(prefill)));
  const decode = storedBatches(BLOCKS, 1);
  index = newIndex(16);
  rows.push(appliedRow("decode: 1 block per BlockStored", index, decode));
  index = newIndex(64);
  rows.push(appliedRow("engine 16-token blocks → 64-token request blocks", index, decode));
  // The subscriber's path: the publisher's positional msgpack payload, decoded, then applied.
  const encoder = new Encoder({ useBigInt64: true });
  const payloads = prefill.map((b) => {
    const e = b.events[0] as Extract<IndexKvEvent, { type: "BlockStored" }>;
    const wire = [
      "BlockStored",
      e.blockHashes,
      e.parentBlockHash,
      Array.from(e.tokenIds),
      ENGINE_BLOCK,
      null,
      "GPU",
      null,
      null,
      null,
      null,
    ];
    return { pod: b.pod, payload: encoder.encode([Date.now() / 1000, [wire], 0]) };
  });
  index = newIndex(16);
  const micros = cpuMicros(() => {
    for (const { pod, payload } of payloads) index.apply(decodeBatch(payload).events, pod, MODEL, 0);
  });
  rows.push(ingestRow("msgpack decode + apply (prefill batches)", BLOCKS, payloads.length, micros, index));
  return rows;
}

/** Prompt text of `tokens` estimate-tokenizer tokens, distinct per seed. */
function promptText(seed: number, tokens: number): string {
  return Array.from(tokenStream(seed, tokens), (id) => id.toString(36).padStart(4, "_").slice(-4)).join("");
}

/** Decisions of the precise config's scheduler over `ENDPOINTS` endpoints holding conversations. */
async function scheduling(): Promise<Record<string, string | number>[]> {
  const config = loadConfig({ path: new URL("../examples/configs/precise.yaml", import.meta.url).pathname });
  const producer = config.plugins.get("precise-prefix-cache-producer") as PrecisePrefixCacheProducer;
  const endpoints = Array.from({ length: ENDPOINTS }, (_, i) => makeEndpoint(`pod-${i}`));
  const rows = [];
  for (const promptTokens of smoke ? [1024] : [1024, 32_768, 200_000]) {
    const conversations = Math.max(1, Math.floor(HELD_TOKENS / promptTokens));
    const held: { text: string; tokens: Uint32Array }[] = [];
    for (let e = 0; e < ENDPOINTS; e++)
      for (let c = 0; c < conversations; c++) {
        const text = promptText(promptTokens * 1000 + e * conversations + c, promptTokens);
        const tokens = defaultTokenizer.encode(text);
        if (c === conversations - 1) held.push({ text, tokens });
        const event = conversationStored(e * conversations + c, tokens);
        producer.kvEvents([event], endpoints[e]!.metadata.key, MODEL);
      }
    const iterations = smoke ? 50 : promptTokens > 100_000 ? 100 : promptTokens > 10_000 ? 300 : 2000;
    // Prompts nobody holds: the match stops at their first block, the speculative entries take all.
    const unseen = Array.from({ length: ENDPOINTS }, (_, i) =>
      tokenStream(7_000_000 + promptTokens + i, promptTokens),
    );
    // As the gateway holds a token-id prompt: each decision's ids are a fresh copy (a parsed body's).
    const idPrompts = new HeldIdPrompts(256 * 1024 * 1024);
    const decide = (path: string, e: number): boolean => {
      const ctx =
        path === "text, estimate tokenizer"
          ? makeContext({ model: MODEL, promptText: held[e]!.text })
          : path === "never seen, tokens given"
            ? makeContext({ model: MODEL, promptText: "", tokens: unseen[e]! })
            : path === HELD_IDS
              ? makeContext({ model: MODEL, promptText: "", tokens: idPrompts.hold(held[e]!.tokens.slice()) })
              : makeContext({ model: MODEL, promptText: held[e]!.text, tokens: held[e]!.tokens });
      void config.scheduler.prepare(ctx, endpoints);
      const result = config.scheduler.schedule(ctx, endpoints) as SchedulingResult;
      config.scheduler.preRequest(ctx, result);
      const target = result.profileResults.get(result.primaryProfileName)?.targetEndpoints[0];
      return target === endpoints[e];
    };
    // Each endpoint's prompt once: the first sight of its tokens (no request key remembered yet).
    const paths = [
      "never seen, tokens given",
      "first sight, tokens given",
      "tokens given",
      HELD_IDS,
      "text, estimate tokenizer",
    ];
    for (const path of paths) {
      const once = path === "never seen, tokens given" || path === "first sight, tokens given";
      const n = once ? ENDPOINTS : iterations;
      // Untimed, each prompt held once: what follows is every later turn, as for "tokens given".
      if (path === HELD_IDS) for (let e = 0; e < ENDPOINTS; e++) decide(path, e);
      let picks = 0;
      const micros = cpuMicros(() => {
        for (let i = 0; i < n; i++) if (decide(path, i % ENDPOINTS)) picks++;
      });
      rows.push({
        prompt: `${promptTokens} tokens, ${path}`,
        endpoints: ENDPOINTS,
        "index entries": producer.cache.index.stats().holders,
        decisions: n,
        "µs CPU / decision": +(micros / n).toFixed(1),
        "picked the holder": path.startsWith("never") ? "–" : `${((100 * picks) / n).toFixed(0)}%`,
      });
      // Speculative entries still to key are keyed by later index calls; key them now, apart.
      const index = producer.cache.index;
      if (index.pendingSpeculativeBlocks === 0) continue;
      const deferred = cpuMicros(() => {
        while (index.pendingSpeculativeBlocks > 0) index.apply([], "none", MODEL, 0);
      });
      rows.push({
        prompt: `${promptTokens} tokens, ${path}: keyed by later index calls`,
        decisions: n,
        "µs CPU / decision": +(deferred / n).toFixed(1),
      });
    }
  }
  return rows;
}

/** The longest single `set` while a KeyTable grows to `keys` random keys (its doublings included). */
function keyTableGrowth(keys: number): Record<string, string | number> {
  const table = new KeyTable();
  let longest = 0;
  const start = performance.now();
  for (let i = 0; i < keys; i++) {
    const key = Math.floor(Math.random() * 2 ** 53);
    const before = performance.now();
    table.set(key, i);
    longest = Math.max(longest, performance.now() - before);
  }
  return {
    keys,
    "longest set, ms": +longest.toFixed(1),
    "ns / set": Math.round(((performance.now() - start) * 1e6) / keys),
  };
}

console.log(`Precise index ingest (${BLOCKS} blocks over ${ENDPOINTS} pods, one core)`);
console.table(ingest());
console.log("\nPer-block hashes of a prompt, 64-token blocks (one core)");
console.table(keyCostRows(smoke ? 16_384 : 200_000, MODEL, smoke ? 5 : 20));
console.log("\nKeyTable growth (wall clock; the index's lookups, doubling as they fill)");
console.table([keyTableGrowth(smoke ? 200_000 : 4_000_000)]);
console.log(`\nScheduling decision, examples/configs/precise.yaml, ${ENDPOINTS} endpoints`);
const gc = watchGc();
console.table(await scheduling());
const pauses = await gc.stop();
console.log("\nGarbage collection while the scheduling indexes were built and decided on (wall ms)");
console.table([
  {
    collections: pauses.all,
    "longest, ms": +pauses.longestMs.toFixed(1),
    "total, ms": +pauses.totalMs.toFixed(0),
    "full collections": pauses.major,
    "longest full, ms": +pauses.longestMajorMs.toFixed(1),
  },
]);
if (!process.argv.includes("--no-tokenize-turn")) {
  console.log("\nTokenize + schedule a chat turn (benchmarks/tokenize-turn.ts)");
  const rows = await runTokenizeTurn({
    historyTokens: smoke ? 20_000 : 200_000,
    newTokens: 2000,
    iterations: smoke ? 5 : 100,
    endpoints: ENDPOINTS,
  });
  console.table(tokenizeTurnTable(rows));
}
