/**
 * `npm run bench -- tokenize-turn [--smoke] [--history=200000] [--new=2000] [--iterations=200] [--threads]
 * [--config=examples/configs/default.yaml] [--loop-cpu=dedicated]`:
 * what a real tokenizer adds to a chat turn in the router. Conversations of about `--history`
 * Llama-3.1 tokens that the router has already seen get a new turn adding `--new` tokens (an
 * assistant reply and a user message); the real scheduler runs with `--config` (default:
 * examples/configs/default.yaml) plus `token-producer {tokenizer: llama3.1}`, started as the live
 * router starts it (worker thread on; `--loop-cpu=dedicated` gives the event loop a CPU of its own
 * and the worker and the other threads the rest, as the plugin's `loopCpu` does, from the first
 * case that starts it on). Timed per turn, from the parsed body to the decision's
 * pre-request hooks: the added latency (p50 / p99), and the longest the event loop was blocked
 * (the longest synchronous section of the decision: worker time does not count). Two kinds of
 * seen turn: the next turn (ten conversations in rotation, each turn continuing its conversation's
 * previous one, from `--history` less half the turns' tokens to `--history` plus as much) and a
 * fork (every turn branching after the same held message, as a regenerated reply does). For
 * comparison: the config as it is (no token-producer: the default's prefix producer hashes the
 * text, precise.yaml's estimates tokens) and an unseen conversation of the same size tokenized
 * from scratch.
 * `runTokenizeTurn` is exported for other benchmarks (kv-events). Each body is JSON-parsed fresh,
 * as the gateway does, so no string is shared with an earlier turn.
 * With `NODE_OPTIONS=--expose-gc` a GC runs between turns (untimed); the collections that ran
 * during the timed turns are counted, with the longest. Before and after every turn a fixed busy
 * loop calibrated to ≈ 0.5 ms runs as a noise floor (busy-control.ts), and each case's slowest turns
 * name the sections of their longest block (spans.ts), the collections inside it and the control's
 * readings around them (`tokenizeTurnTails`). For every longest block and every control run the
 * event loop's thread's time on a CPU and its runqueue wait are read from the kernel
 * (thread-schedule.ts, `tokenizeTurnSchedule`), so a long block of our work reads apart from a
 * block during which the thread was not running.
 */
import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { renderChat } from "../src/api/prompt.ts";
import { loadConfig } from "../src/config/index.ts";
import type { Endpoint } from "../src/endpoints/endpoint.ts";
import { isHostedPlugin } from "../src/scheduler/framework/hosted.ts";
import { makeContext, makeEndpoint } from "../src/scheduler/framework/testing.ts";
import type { RequestScheduler, SchedulingResult } from "../src/scheduler/framework/types.ts";
import { type GcEntry, type GcPauses, watchGc } from "./kv-events/gc-pauses.ts";
import { BusyControl } from "./tokenize-turn/busy-control.ts";
import { probeClasses, probeScheduler, type Span, selfTimes, spans } from "./tokenize-turn/spans.ts";
import { type ScheduleRow, ScheduleTally } from "./tokenize-turn/schedule-tally.ts";
import { Sections } from "./tokenize-turn/sections.ts";
import {
  InvoluntarySwitches,
  type ScheduleDelta,
  scheduleDelta,
  ThreadGroupSchedule,
  threadIds,
  untilQuiet,
} from "./tokenize-turn/thread-schedule.ts";

/**
 * `--threads`: also read the process's other threads (V8's platform threads) at every section
 * boundary, to tell whose CPU time a waiting block lost; the extra reads lengthen each section by
 * a few tens of µs, so this is a diagnostic mode, off by default.
 */
const attributeThreads = process.argv.includes("--threads");
const DEFAULT_CONFIG = new URL("../examples/configs/default.yaml", import.meta.url);
const CHAT = "/v1/chat/completions";
const MODEL = "meta-llama/Llama-3.1-8B-Instruct";
const collect = (globalThis as { gc?: () => void }).gc;
const involuntary = new InvoluntarySwitches();

/** What one run measures. */
export interface TokenizeTurnOptions {
  /** Tokens of the conversation the router has seen. */
  historyTokens: number;
  /** Tokens the new turn adds. */
  newTokens: number;
  /** Turns timed per case (the from-scratch case runs a tenth of them, at least 3). */
  iterations: number;
  endpoints: number;
  /** The EndpointPickerConfig (default: examples/configs/default.yaml). */
  config?: URL;
  /** token-producer's `loopCpu` (default shared). */
  loopCpu?: "shared" | "dedicated";
}

/**
 * Milliseconds of one case: added latency and the longest event-loop block. On a busy machine
 * the minimum is the closest reading of the work itself; p50 and p99 include the machine's noise.
 */
export interface TokenizeTurnRow {
  case: string;
  turns: number;
  /** The fewest and most tokens of a timed turn's prompt; null when nothing tokenized it. */
  promptTokens: { min: number; max: number } | null;
  addedMs: Spread;
  /** The turn's time on the event loop (the rest was on the worker thread). */
  onLoopMs: Spread;
  blockMs: Spread;
  /** The longest block the decision left on a timer (the approximate index's deferred inserts). */
  deferredMs: Spread;
  /** Collections that ran during the timed turns (the forced ones between turns excluded), and the longest. */
  gc: { count: number; longestMs: number };
  /** The busy-loop control's readings, right before and after each turn. */
  controlMs: Spread;
  /** The longest block's and the control's time on a CPU and waiting on a runqueue (thread-schedule.ts). */
  schedule: ScheduleRow;
  /** The turns with the longest blocks, slowest first. */
  slowest: TailTurn[];
  /** Each labelled section's own time per turn (spans.ts), by label. */
  sectionMs: Map<string, Spread>;
}

/** One of a case's slowest turns: what its longest block was made of. */
export interface TailTurn {
  turn: number;
  blockMs: number;
  /** Labelled sections' own time inside the longest block, largest first (spans.ts). */
  sections: [string, number][];
  /** Collections that started inside the longest block. */
  gcInBlock: GcEntry[];
  /** The control's readings right before and right after the turn. */
  controlMs: [number, number];
  /** The event loop's thread in the block, and the worker's on-CPU time meanwhile. */
  schedule: ScheduleDelta;
  workerCpuMs: number;
}

/** Slowest turns listed per case. */
const TAIL_TURNS = 3;
/** Sections listed per case. */
const TOP_SECTIONS = 8;
/** The control's length: a typical next-turn block. */
const CONTROL_MS = 0.5;

type Message = { role: string; content: string };
type Spread = { min: number; p50: number; p99: number; max: number };

/** Prose and code to talk about: the project's docs and sources, read once. */
function material(): string {
  const read = (dir: string, ext: string) => {
    const url = new URL(dir, import.meta.url);
    return readdirSync(url, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(ext))
      .sort()
      .map((f) => readFileSync(new URL(f, url), "utf8"));
  };
  return [...read("../docs/", ".md"), ...read("../src/", ".ts")].join("\n");
}

/** Characters per Llama-3.1 token on this material (measured: 200K tokens ≈ 720K characters). */
const CHARS_PER_TOKEN = 3.6;

/**
 * Messages alternating user/assistant, cut from `text` at `from`, of about `tokens` tokens. Sized
 * by characters, so this process never loads the tokenizer: its heap would slow every GC here.
 */
function conversation(text: string, from: number, tokens: number, label: string): Message[] {
  const messages: Message[] = [{ role: "system", content: `You are a coding agent (${label}).` }];
  const chunk = 8000;
  for (let at = from, held = 0; held < tokens * CHARS_PER_TOKEN; at += chunk, held += chunk) {
    const start = at % (text.length - chunk);
    const role = messages.length % 2 === 1 ? "user" : "assistant";
    messages.push({ role, content: `[${label} ${messages.length}] ${text.slice(start, start + chunk)}` });
  }
  return messages;
}

/** The new turn: an assistant reply and a user question of about `tokens` tokens together. */
function turn(text: string, from: number, tokens: number, label: string): Message[] {
  const chars = (tokens * CHARS_PER_TOKEN) / 2;
  const start = from % (text.length - 2 * chars);
  return [
    { role: "assistant", content: `[${label} reply] ${text.slice(start, start + chars)}` },
    { role: "user", content: `[${label} ask] ${text.slice(start + chars, start + 2 * chars)}` },
  ];
}

function summary(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { min: sorted[0]!, p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1]! };
}

/** A scheduler over `config`, with `extra` plugins put first; hosted plugins started. */
async function scheduler(
  config: URL,
  extra: string,
  sections: Sections,
): Promise<{ scheduler: RequestScheduler; close(): Promise<void> }> {
  const text = readFileSync(config, "utf8").replace("plugins:\n", `plugins:\n${extra}`);
  const loaded = loadConfig(text);
  const hosted = [...loaded.plugins.values()].filter(isHostedPlugin);
  const before = new Set(threadIds());
  for (const plugin of hosted) await plugin.start();
  const started = threadIds().filter((tid) => !before.has(tid));
  if (started.length > 0) sections.worker = new ThreadGroupSchedule(started);
  // Read only to wait out a forced collection's background work (untilQuiet).
  if (collect)
    sections.background = new ThreadGroupSchedule(threadIds().filter((tid) => tid !== process.pid));
  if (attributeThreads)
    sections.others = new ThreadGroupSchedule(
      threadIds().filter((tid) => tid !== process.pid && !started.includes(tid)),
    );
  // Spans first, so a producer's span ends before the section its promise closes.
  probeScheduler(loaded.scheduler);
  probeClasses();
  sections.watch(loaded.scheduler);
  return {
    scheduler: loaded.scheduler,
    close: async () => {
      sections.release();
      for (const plugin of hosted) await plugin.close();
    },
  };
}

/** One timed decision. */
interface Decision {
  ms: number;
  blockMs: number;
  /** The longest block's start and end. */
  blockAt: [number, number];
  onLoopMs: number;
  /** The longest outermost span that ran after the decision, on a timer (the deferred inserts); 0 if none. */
  deferredMs: number;
  promptTokens: number | null;
  gc: GcPauses;
  spans: Span[];
  /** The event loop's thread during the longest block, and the worker's on-CPU ms meanwhile. */
  schedule: ScheduleDelta;
  workerCpuMs: number;
  /** With `--threads`: the process's other threads' (V8's) on-CPU ms during the longest block. */
  othersCpuMs: number;
  /** The event loop's thread's involuntary context switches in the turn. */
  involuntary: number;
  /** Its runqueue wait between a handoff to the worker and the reply, and the worker's on-CPU ms meanwhile. */
  handoffWaitMs: number;
  handoffWorkerCpuMs: number;
}

/** One scheduling decision for `messages` parsed from JSON; its added latency and longest block. */
async function decide(
  scheduler: RequestScheduler,
  sections: Sections,
  endpoints: readonly Endpoint[],
  body: string,
): Promise<Decision> {
  if (collect && sections.background) {
    collect();
    await untilQuiet(sections.background);
  }
  const parsed = JSON.parse(body) as { messages: Message[] };
  const gc = watchGc();
  const switches = involuntary.read();
  spans.start();
  sections.open();
  const t0 = performance.now();
  const ctx = makeContext({
    model: MODEL,
    path: CHAT,
    body: parsed,
    promptText: spans.time("renderChat", () => renderChat(parsed.messages)),
  });
  await scheduler.prepare(ctx, endpoints);
  const result = scheduler.schedule(ctx, endpoints) as SchedulingResult;
  scheduler.preRequest(ctx, result);
  const ms = performance.now() - t0;
  sections.close();
  const switched = involuntary.read() - switches;
  const decided = performance.now();
  // The decision's timers (the approximate index's deferred inserts) run before this one.
  await new Promise((resolve) => setTimeout(resolve, 0));
  const recorded = spans.stop();
  let deferredMs = 0;
  for (const s of recorded)
    if (s.depth === 0 && s.start >= decided) deferredMs = Math.max(deferredMs, s.end - s.start);
  const pauses = await gc.stop();
  const picked = result.profileResults.get(result.primaryProfileName)!.targetEndpoints[0]!;
  scheduler.complete(ctx, picked, "natural", undefined);
  const promptTokens = ctx.request.tokens?.length ?? null;
  const { longest: blockMs, longestAt: blockAt, onLoop: onLoopMs } = sections;
  return {
    ms,
    blockMs,
    blockAt,
    onLoopMs,
    deferredMs,
    promptTokens,
    gc: pauses,
    spans: recorded,
    schedule: sections.longestSchedule,
    workerCpuMs: sections.longestWorkerCpuMs,
    othersCpuMs: sections.longestOthersCpuMs,
    involuntary: switched,
    handoffWaitMs: sections.handoffWaitMs,
    handoffWorkerCpuMs: sections.handoffWorkerCpuMs,
  };
}

/** What the longest block of turn `turn` held, with the control's readings around it. */
function tailTurn(turn: number, one: Decision, controlMs: [number, number]): TailTurn {
  const [from, to] = one.blockAt;
  return {
    turn,
    blockMs: one.blockMs,
    sections: selfTimes(one.spans, one.blockAt),
    gcInBlock: one.gc.entries.filter((e) => e.startMs >= from && e.startMs < to),
    controlMs,
    schedule: one.schedule,
    workerCpuMs: one.workerCpuMs,
  };
}

async function timeCase(
  config: URL,
  name: string,
  extra: string,
  bodies: (i: number) => string,
  warm: readonly string[],
  turns: number,
  endpoints: readonly Endpoint[],
): Promise<TokenizeTurnRow> {
  const sections = new Sections();
  const run = await scheduler(config, extra, sections);
  const control = new BusyControl(CONTROL_MS);
  try {
    for (const body of warm) await decide(run.scheduler, sections, endpoints, body);
    const ms: number[] = [];
    const blocks: number[] = [];
    const onLoop: number[] = [];
    const deferred: number[] = [];
    const tokens: number[] = [];
    const controls: number[] = [];
    let slowest: TailTurn[] = [];
    const bySection = new Map<string, number[]>();
    const gc = { count: 0, longestMs: 0 };
    const schedule = new ScheduleTally();
    const runControl = () => {
      const t0 = performance.now();
      const from = sections.schedule();
      const ms = control.run();
      const wall = performance.now() - t0;
      schedule.control(wall, scheduleDelta(from, sections.schedule()));
      return ms;
    };
    for (let i = 0; i < turns; i++) {
      const body = bodies(i);
      const before = runControl();
      const one = await decide(run.scheduler, sections, endpoints, body);
      const after = runControl();
      controls.push(before, after);
      schedule.turn(one);
      ms.push(one.ms);
      blocks.push(one.blockMs);
      onLoop.push(one.onLoopMs);
      deferred.push(one.deferredMs);
      if (one.promptTokens !== null) tokens.push(one.promptTokens);
      gc.count += one.gc.all;
      gc.longestMs = Math.max(gc.longestMs, one.gc.longestMs);
      for (const [label, own] of selfTimes(one.spans)) {
        const all = bySection.get(label) ?? [];
        all.push(own);
        bySection.set(label, all);
      }
      if (slowest.length < TAIL_TURNS || one.blockMs > slowest[slowest.length - 1]!.blockMs) {
        slowest.push(tailTurn(i, one, [before, after]));
        slowest = slowest.sort((a, b) => b.blockMs - a.blockMs).slice(0, TAIL_TURNS);
      }
    }
    const promptTokens = tokens.length > 0 ? { min: Math.min(...tokens), max: Math.max(...tokens) } : null;
    return {
      case: name,
      turns,
      promptTokens,
      addedMs: summary(ms),
      onLoopMs: summary(onLoop),
      blockMs: summary(blocks),
      deferredMs: summary(deferred),
      gc,
      controlMs: summary(controls),
      schedule: schedule.row(summary),
      slowest,
      sectionMs: new Map([...bySection].map(([label, all]) => [label, summary(all)])),
    };
  } finally {
    await run.close();
  }
}

/** Conversations the next-turn case rotates through. */
const CONVERSATIONS = 10;

/**
 * Bodies of the next-turn case: turn `i` continues conversation `i % CONVERSATIONS` by one more
 * turn, so each conversation grows by `newTokens` a turn around `historyTokens`. `warm` are the
 * conversations as the router saw them first. Each turn's new text starts 9,973 characters after
 * the previous turn's, as the fork's does, so no two turns bring the same text (the tokenizer's
 * word cache would remember it); as for the fork, some of it is also in the held conversations.
 */
function nextTurns(
  text: string,
  options: TokenizeTurnOptions,
): { warm: string[]; body: (i: number) => string } {
  const perConversation = Math.ceil(options.iterations / CONVERSATIONS);
  const start = options.historyTokens - options.newTokens * Math.ceil((perConversation + 1) / 2);
  const held = Array.from({ length: CONVERSATIONS }, (_, c) =>
    conversation(text, 200_000 + c * 70_001, start, `conversation ${c}`),
  );
  const body = (i: number) => {
    const c = i % CONVERSATIONS;
    const turns = Math.floor(i / CONVERSATIONS);
    const added = Array.from({ length: turns + 1 }, (_, k) =>
      turn(text, 60_000 + (k * CONVERSATIONS + c) * 9_973, options.newTokens, `conversation ${c}, turn ${k}`),
    );
    return JSON.stringify({ messages: [...held[c]!, ...added.flat()] });
  };
  return { warm: held.map((messages) => JSON.stringify({ messages })), body };
}

/** Times the four cases (see the module comment). */
export async function runTokenizeTurn(options: TokenizeTurnOptions): Promise<TokenizeTurnRow[]> {
  const text = material();
  const endpoints = Array.from({ length: options.endpoints }, (_, i) => makeEndpoint(`pod-${i}`));
  const history = conversation(text, 0, options.historyTokens - options.newTokens, "seen");
  const withTurn = (i: number) =>
    JSON.stringify({
      messages: [...history, ...turn(text, 50_000 + i * 9_973, options.newTokens, `turn ${i}`)],
    });
  const loopCpu = options.loopCpu ?? "shared";
  const real = `- type: token-producer\n  parameters: {tokenizer: llama3.1, loopCpu: ${loopCpu}}\n`;
  // The router saw the conversation (and one warm-up turn) before the timed turns.
  const warm = [JSON.stringify({ messages: history }), withTurn(-1)];
  const next = nextTurns(text, options);
  const scratch = Math.max(3, Math.ceil(options.iterations / 10));
  const unseen = (i: number) =>
    JSON.stringify({
      messages: conversation(text, 1_000_003 * (i + 1), options.historyTokens, `unseen ${i}`),
    });
  const unseenBodies = Array.from({ length: scratch }, (_, i) => unseen(i));
  const { iterations } = options;
  const config = options.config ?? DEFAULT_CONFIG;
  return [
    await timeCase(
      config,
      "the config as it is (no token-producer)",
      "",
      withTurn,
      warm,
      iterations,
      endpoints,
    ),
    await timeCase(
      config,
      "llama3.1, seen conversation, next turn",
      real,
      next.body,
      next.warm,
      iterations,
      endpoints,
    ),
    await timeCase(
      config,
      "llama3.1, seen conversation, a fork",
      real,
      withTurn,
      warm,
      iterations,
      endpoints,
    ),
    await timeCase(
      config,
      "llama3.1, unseen conversation (from scratch)",
      real,
      (i) => unseenBodies[i]!,
      warm,
      scratch,
      endpoints,
    ),
  ];
}

/** The rows as a printable table. */
export function tokenizeTurnTable(rows: readonly TokenizeTurnRow[]): Record<string, string | number>[] {
  const f = (s: Spread) => [s.min, s.p50, s.p99, s.max].map((v) => v.toFixed(2)).join(" / ");
  return rows.map((r) => ({
    case: r.case,
    turns: r.turns,
    "prompt tokens": r.promptTokens ? `${r.promptTokens.min}–${r.promptTokens.max}` : "—",
    "added ms min / p50 / p99 / max": f(r.addedMs),
    "on the event loop ms": f(r.onLoopMs),
    "longest block ms": f(r.blockMs),
    "deferred block ms": f(r.deferredMs),
    "GCs in turns (longest ms)": `${r.gc.count} (${r.gc.longestMs.toFixed(2)})`,
    [`${CONTROL_MS} ms control ms`]: f(r.controlMs),
  }));
}

/**
 * Each case's longest blocks and control runs as the scheduler saw the event loop's thread: on a
 * CPU, waiting on a runqueue, the blocks over 1 ms and what they were made of, and the waits during
 * which the tokenizer's worker ran.
 */
export function tokenizeTurnSchedule(rows: readonly TokenizeTurnRow[]): Record<string, string | number>[] {
  const f = (s: Spread) => [s.min, s.p50, s.p99, s.max].map((v) => v.toFixed(2)).join(" / ");
  const ms = (v: number) => v.toFixed(2);
  return rows.map(({ case: name, blockMs, schedule: s }) => ({
    case: name,
    "block wall ms": f(blockMs),
    "block on-CPU ms": f(s.blockCpuMs),
    "block runqueue wait ms": f(s.blockWaitMs),
    "control wall ms (with the reads)": f(s.controlWallMs),
    "control on-CPU ms": f(s.controlCpuMs),
    "control runqueue wait ms": f(s.controlWaitMs),
    "involuntary switches a turn": f(s.involuntary),
    "wait from handoff to reply ms": f(s.handoffWaitMs),
    "handoffs that waited: wait / worker on-CPU ms": `${s.handoffs.waited}: ${ms(s.handoffs.waitMs)} / ${ms(s.handoffs.workerCpuMs)}`,
    "blocks > 1 ms: on-CPU > 1 ms; wall / wait ms": `${s.over.blocks}: ${s.over.onCpu}; ${ms(s.over.wallMs)} / ${ms(s.over.waitMs)}`,
    "blocks that waited (ms): worker on a CPU then (ms)": `${s.waited.blocks} (${ms(s.waited.waitMs)}): ${s.waited.withWorker} (${ms(s.waited.withWorkerWaitMs)})`,
    ...(attributeThreads && {
      "of them, V8's threads on a CPU: blocks (their on-CPU ms)": `${s.waited.withOthers} (${ms(s.waited.othersCpuMs)})`,
    }),
  }));
}

/** Each case's labelled sections, own ms per turn that ran them, by p99 (the `TOP_SECTIONS` longest). */
export function tokenizeTurnSections(rows: readonly TokenizeTurnRow[]): Record<string, string | number>[] {
  const f = (s: Spread) => [s.min, s.p50, s.p99, s.max].map((v) => v.toFixed(3)).join(" / ");
  return rows.flatMap((r) =>
    [...r.sectionMs]
      .sort((a, b) => b[1].p99 - a[1].p99)
      .slice(0, TOP_SECTIONS)
      .map(([label, spread]) => ({
        case: r.case,
        section: label,
        "own ms min / p50 / p99 / max": f(spread),
      })),
  );
}

/** Each case's slowest turns: the sections of their longest block, collections in it, the control around it. */
export function tokenizeTurnTails(rows: readonly TokenizeTurnRow[]): Record<string, string | number>[] {
  const ms = (v: number) => v.toFixed(2);
  return rows.flatMap((r) =>
    r.slowest.map((t) => ({
      case: r.case,
      turn: t.turn,
      "longest block ms": ms(t.blockMs),
      "its largest sections (own ms)": t.sections
        .slice(0, 3)
        .map(([label, v]) => `${label} ${ms(v)}`)
        .join("; "),
      "GCs in it": t.gcInBlock.map((g) => `${g.kind} ${ms(g.ms)}`).join(", ") || "none",
      "on-CPU / runqueue wait ms (slices)": `${ms(t.schedule.cpuMs)} / ${ms(t.schedule.waitMs)} (${t.schedule.slices})`,
      "worker on-CPU ms": ms(t.workerCpuMs),
      "control before / after ms": `${ms(t.controlMs[0])} / ${ms(t.controlMs[1])}`,
    })),
  );
}

if (process.argv[1]?.endsWith("tokenize-turn.ts")) {
  const arg = (name: string, fallback: number) =>
    Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split("=")[1] ?? fallback);
  const smoke = process.argv.includes("--smoke");
  const configPath =
    process.argv.find((a) => a.startsWith("--config="))?.slice("--config=".length) ??
    "examples/configs/default.yaml";
  const options: TokenizeTurnOptions = {
    historyTokens: arg("history", smoke ? 20_000 : 200_000),
    newTokens: arg("new", 2000),
    iterations: arg("iterations", smoke ? 10 : 200),
    endpoints: 16,
    config: new URL(configPath, `file://${process.cwd()}/`),
    loopCpu: process.argv.includes("--loop-cpu=dedicated") ? "dedicated" : "shared",
  };
  console.log(
    `a ${options.historyTokens}-token chat turn adding ${options.newTokens} tokens, ${configPath} over ` +
      `${options.endpoints} endpoints (loop CPU ${options.loopCpu}, node ${process.version}, gc between turns: ${collect ? "yes" : "no"}, ` +
      `load average ${loadavg()[0]!.toFixed(1)})`,
  );
  const rows = await runTokenizeTurn(options);
  console.table(tokenizeTurnTable(rows));
  console.log(
    "\nThe event loop's thread in the longest block and in the control (tokenize-turn/thread-schedule.ts)",
  );
  console.table(tokenizeTurnSchedule(rows));
  console.log("\nSections of a turn, own time (benchmarks/tokenize-turn/spans.ts)");
  console.table(tokenizeTurnSections(rows));
  console.log("\nThe slowest turns' longest blocks");
  console.table(tokenizeTurnTails(rows));
}
