/**
 * `npm run bench -- engine [--steps N]`: batch steps per CPU-second of the engine core at batch 1, 64 and
 * 256 in steady state (finished requests are replaced at once, so admission, prefix lookups, block
 * allocation, commits and frees all run), measured with process.cpuUsage. One row also listens to KV events.
 * A second table is prefix-cache bound, like the fleet simulator's agentic runs: 32K-token prompts (24K
 * shared by groups of prompts, 8K unique) against the full H200 pool, so each admission looks up and
 * registers ~2,000 blocks and the LRU evicts constantly.
 */
import { createEngine, type Engine } from "../src/engine/index.ts";
import { concatTokens, syntheticTokens } from "../src/engine/test-prompts.ts";

const PROMPT_TOKENS = 256;
const OUTPUT_TOKENS = 256;
const arg = process.argv.indexOf("--steps");
const STEPS = arg > 0 ? Number(process.argv[arg + 1]) : 20_000;

/** 64 prompts over 8 shared 192-token prefixes, so refills hit the prefix cache. */
const prompts = Array.from({ length: 64 }, (_, i) =>
  concatTokens(syntheticTokens(PROMPT_TOKENS - 64, 1 + (i % 8)), syntheticTokens(64, 100 + i)),
);

interface Row {
  batch: number;
  events: boolean;
  steps: number;
  cpuSeconds: number;
  tokens: number;
  heapDeltaMb: number;
}

function fill(engine: Engine, count: number, next: { n: number }): void {
  for (let i = 0; i < count; i++, next.n++) {
    engine.add(
      { id: `r${next.n}`, promptTokens: prompts[next.n % prompts.length]!, maxTokens: OUTPUT_TOKENS },
      0,
    );
  }
}

function measure(batch: number, events: boolean): Row {
  const engine = createEngine({ maxNumSeqs: batch });
  let eventCount = 0;
  if (events) engine.onKvEvent((batchOfEvents) => (eventCount += batchOfEvents.length));
  const next = { n: 0 };
  fill(engine, batch, next);
  let now = 0;
  for (let i = 0; i < 2_000; i++) now = runStep(engine, now, next); // warm up the JIT and reach steady state
  const tokensBefore = engine.stats().generationTokens;
  const heapBefore = process.memoryUsage().heapUsed;
  const start = process.cpuUsage();
  for (let i = 0; i < STEPS; i++) now = runStep(engine, now, next);
  const used = process.cpuUsage(start);
  const heapDeltaMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
  const tokens = engine.stats().generationTokens - tokensBefore;
  if (events && eventCount === 0) throw new Error("listener saw no events");
  return { batch, events, steps: STEPS, cpuSeconds: (used.user + used.system) / 1e6, tokens, heapDeltaMb };
}

function runStep(engine: Engine, now: number, next: { n: number }): number {
  const step = engine.step(now);
  if (!step) return now;
  let finished = 0;
  for (const o of step.outputs) if (o.finished) finished++;
  if (finished > 0) fill(engine, finished, next);
  return now + step.durationMs;
}

const LONG_SHARED = 24_576;
const LONG_UNIQUE = 8_192;
const LONG_REQUESTS = 4_000;

/** Admissions of long prompts until LONG_REQUESTS finished; steps, CPU and prompts per CPU-second. */
function measureLong(): { steps: number; cpuSeconds: number; prompts: number } {
  const engine = createEngine({ maxNumSeqs: 64 });
  const shared = Array.from({ length: 64 }, (_, g) => syntheticTokens(LONG_SHARED, 1_000 + g));
  // 509 tails (prime) × 64 groups: every (group, tail) pair of the run is distinct, so tails never hit.
  const tails = Array.from({ length: 509 }, (_, t) => syntheticTokens(LONG_UNIQUE, 10_000 + t));
  let n = 0;
  const addOne = (): void => {
    const prompt = concatTokens(shared[(n * 7) % shared.length]!, tails[n % tails.length]!);
    engine.add({ id: `l${n++}`, promptTokens: prompt, maxTokens: 4 }, 0);
  };
  for (let i = 0; i < 64; i++) addOne();
  let now = 0;
  let finished = 0;
  let steps = 0;
  const start = process.cpuUsage();
  while (finished < LONG_REQUESTS) {
    const step = engine.step(now);
    if (!step) break;
    steps++;
    for (const o of step.outputs) {
      if (!o.finished) continue;
      finished++;
      addOne();
    }
    now += step.durationMs;
  }
  const used = process.cpuUsage(start);
  return { steps, cpuSeconds: (used.user + used.system) / 1e6, prompts: finished };
}

const rows = [measure(1, false), measure(64, false), measure(256, false), measure(64, true)];
console.log(
  `engine core: ${STEPS} steps per row after 2,000 warm-up steps; prompt ${PROMPT_TOKENS}, output ${OUTPUT_TOKENS}`,
);
console.table(
  rows.map((r) => ({
    batch: r.batch,
    "kv events": r.events ? "listening" : "off",
    "steps/cpu-s": Math.round(r.steps / r.cpuSeconds),
    "µs/step": ((r.cpuSeconds * 1e6) / r.steps).toFixed(2),
    "tokens/cpu-s": Math.round(r.tokens / r.cpuSeconds),
    "heap Δ MB": r.heapDeltaMb.toFixed(1),
  })),
);
const long = measureLong();
console.log(
  `prefix-cache bound: ${LONG_REQUESTS} prompts of ${LONG_SHARED} shared (64 groups) + ${LONG_UNIQUE} unique tokens, 4 out`,
);
console.table([
  {
    steps: long.steps,
    "cpu s": long.cpuSeconds.toFixed(2),
    "µs/step": ((long.cpuSeconds * 1e6) / long.steps).toFixed(1),
    "prompts/cpu-s": Math.round(long.prompts / long.cpuSeconds),
  },
]);
