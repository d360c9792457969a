/**
 * WEKA Claude Code sessions (shared/data/traces/weka-claude-code, flattened by convert_weka.py) as
 * closed-loop agent sessions: main-agent turns issued at previous completion + think time (capped),
 * sub-agents started after the main turn that precedes their spawn, the next main turn waiting for
 * them. Block ids are per session (namespace `weka:<session>#<instance>`); a warm fraction of the
 * tools + system prompt maps to a cross-session namespace (workloads.md §5.5).
 */
import type { StreamPlan, TurnPlan } from "./agent-session.ts";
import { fnv1a32 } from "./rng.ts";
import { readLines } from "./trace-files.ts";
import type { Segment, WorkloadRequest } from "./types.ts";

/** Weka's block size in tokens. */
export const WEKA_BLOCK_TOKENS = 64;

/** One request row of requests.jsonl (fields used here). */
export interface WekaRequestRow {
  session: string;
  agent: string;
  i: number;
  t: number;
  in: number;
  out: number;
  api_time: number;
  think_time: number;
  hash_runs: [number, number][];
}

/** One sub-agent of sessions.jsonl. */
export interface WekaSubagentMeta {
  agent_id: string;
  subagent_type?: string;
  t_spawn: number;
  tool_tokens?: number;
  system_tokens?: number;
}

/** One session: metadata plus its requests grouped by agent, in order. */
export interface WekaSession {
  session: string;
  toolTokens: number;
  systemTokens: number;
  subagents: WekaSubagentMeta[];
  agents: Map<string, WekaRequestRow[]>;
}

/** Options for turning a session into a plan. */
export interface WekaPlanOptions {
  /** Fraction (0..1) of tools + system prompt shared across sessions. */
  warmFraction: number;
  /** Cap on think times and spawn delays, ms (Infinity = none). */
  thinkCapMs: number;
}

/** Loads sessions.jsonl and requests.jsonl from a trace directory (relative to the traces dir). */
export function loadWekaSessions(dir = "weka-claude-code"): WekaSession[] {
  const sessions = new Map<string, WekaSession>();
  for (const line of readLines(`${dir}/sessions.jsonl`)) {
    const s = JSON.parse(line);
    sessions.set(s.session, {
      session: s.session,
      toolTokens: s.tool_tokens ?? 0,
      systemTokens: s.system_tokens ?? 0,
      subagents: s.subagents ?? [],
      agents: new Map(),
    });
  }
  for (const line of readLines(`${dir}/requests.jsonl`)) addRow(sessions, JSON.parse(line));
  return [...sessions.values()].filter((s) => (s.agents.get("main")?.length ?? 0) > 0);
}

function addRow(sessions: Map<string, WekaSession>, row: WekaRequestRow): void {
  const session = sessions.get(row.session);
  if (!session) return;
  const rows = session.agents.get(row.agent) ?? [];
  rows.push(row);
  session.agents.set(row.agent, rows);
}

/** Which folds of a k-fold split by session id a run draws from. */
export interface WekaFold {
  /** Number of folds (≥ 2). */
  k: number;
  /** Folds kept, each in [0, k). */
  include: readonly number[];
}

/**
 * The fold (in [0, k)) of a session id: a hash of the id alone, so a session stays in its fold
 * whatever the seed, the order of the trace files or the other sessions present.
 */
export function sessionFold(session: string, k: number): number {
  return fnv1a32(`fold:${session}`) % k;
}

/** The sessions whose fold is in `fold.include`, in their original order. */
export function sessionsInFolds<T extends { session: string }>(sessions: readonly T[], fold: WekaFold): T[] {
  const keep = new Set(fold.include);
  for (const f of keep)
    if (!Number.isInteger(f) || f < 0 || f >= fold.k)
      throw new RangeError(`fold ${f} outside [0, ${fold.k})`);
  return sessions.filter((s) => keep.has(sessionFold(s.session, fold.k)));
}

/** Expands run-length-encoded hash ids. */
export function expandRuns(runs: readonly [number, number][]): number[] {
  const ids: number[] = [];
  for (const [start, count] of runs) for (let k = 0; k < count; k++) ids.push(start + k);
  return ids;
}

/** Builds the closed-loop plan of one session instance. */
export function wekaPlan(session: WekaSession, instance: number, options: WekaPlanOptions): StreamPlan {
  const ns = `weka:${session.session}#${instance}`;
  const shared = new SharedBlocks();
  const cap = (seconds: number) => Math.min(options.thinkCapMs, Math.max(0, seconds * 1000));
  const stream = (
    agent: string,
    rows: readonly WekaRequestRow[],
    warmTokens: number,
    chain: string,
  ): StreamPlan => {
    const warmBlocks = Math.floor((options.warmFraction * warmTokens) / WEKA_BLOCK_TOKENS);
    const sharedNs = agent === "main" ? "weka:shared" : `weka:shared:${agent}`;
    return {
      turns: rows.map((row, k) => ({
        thinkMs: k === 0 ? 0 : cap(row.think_time),
        build: () => {
          if (k === 0) shared.rememberLeading(row.hash_runs, warmBlocks, sharedNs);
          const kind = agent === "main" ? "main" : "sub-agent";
          return wekaRequest(row, ns, shared.view(), `${chain}:${row.i}`, kind, `${ns}:${chain}`);
        },
      })),
    };
  };
  const mainRows = session.agents.get("main") ?? [];
  const main = stream("main", mainRows, session.toolTokens + session.systemTokens, "main");
  for (const sub of session.subagents) {
    const rows = session.agents.get(sub.agent_id);
    if (!rows?.length) continue;
    const k = parentTurn(mainRows, sub.t_spawn);
    const parent = mainRows[k]!;
    const turn = main.turns[k] as TurnPlan;
    const warm = (sub.tool_tokens ?? 0) + (sub.system_tokens ?? 0);
    const delayMs = cap(sub.t_spawn - parent.t - parent.api_time);
    (turn.spawns ??= []).push({
      delayMs,
      stream: stream(sub.subagent_type ?? sub.agent_id, rows, warm, sub.agent_id),
    });
  }
  return main;
}

/**
 * One request of a row (`key`: agent and turn, unique in the session). Its segments (one object
 * per 64-token block, thousands for an agentic prompt) are rebuilt on each read instead of held:
 * a built request waits through its think time and then its queueing, and millions of held
 * segments made every major GC slow. Each read yields the same segments, resolved against the
 * shared blocks known when the request was built.
 */
function wekaRequest(
  row: WekaRequestRow,
  ns: string,
  shared: SharedLookup,
  key: string,
  kind: string,
  chainId: string,
): WorkloadRequest {
  // What the segments sum to: the blocks, plus a tail when the row's input is longer.
  const inputTokens = Math.max(row.in, runLength(row.hash_runs) * WEKA_BLOCK_TOKENS);
  return {
    id: `${ns}:${key}`,
    sessionId: ns,
    chainId,
    kind,
    inputTokens,
    outputTokens: Math.max(1, row.out),
    get segments() {
      return wekaSegments(expandRuns(row.hash_runs), row.in, ns, shared, key);
    },
  };
}

/** The cross-session segment a trace hash id maps to, if any. */
export interface SharedLookup {
  get(id: number): Segment | undefined;
}

/**
 * The trace hash ids a session maps to cross-session namespaces (first mapping wins), in the order
 * mapped, so a view taken at build time ignores ids mapped later (by a sibling sub-agent's first turn).
 */
class SharedBlocks {
  private readonly byId = new Map<number, { segment: Segment; order: number }>();

  /** Maps the first `count` ids of `runs` to `ns`, block position as segment id. */
  rememberLeading(runs: readonly [number, number][], count: number, ns: string): void {
    const ids = expandRuns(runs);
    for (let p = 0; p < Math.min(count, ids.length); p++) {
      if (!this.byId.has(ids[p]!))
        this.byId.set(ids[p]!, { segment: { ns, id: p, tokens: WEKA_BLOCK_TOKENS }, order: this.byId.size });
    }
  }

  /** The mappings known now. */
  view(): SharedLookup {
    const known = this.byId.size;
    return {
      get: (id) => {
        const entry = this.byId.get(id);
        return entry !== undefined && entry.order < known ? entry.segment : undefined;
      },
    };
  }
}

/** Number of ids in run-length-encoded hash ids. */
function runLength(runs: readonly [number, number][]): number {
  let n = 0;
  for (const [, count] of runs) n += count;
  return n;
}

/** Index of the last main request issued at or before `t` (0 if none). */
function parentTurn(rows: readonly WekaRequestRow[], t: number): number {
  let k = 0;
  for (let j = 0; j < rows.length && rows[j]!.t <= t; j++) k = j;
  return k;
}

/** Segments of one request: a block per hash id, then a unique tail (§5.4, n = floor(L/64)). */
export function wekaSegments(
  ids: readonly number[],
  inputTokens: number,
  ns: string,
  shared: SharedLookup,
  tailKey: string,
): Segment[] {
  const segments: Segment[] = ids.map((id) => shared.get(id) ?? { ns, id, tokens: WEKA_BLOCK_TOKENS });
  const tail = inputTokens - ids.length * WEKA_BLOCK_TOKENS;
  if (tail > 0) segments.push({ ns: `${ns}:tail:${tailKey}`, id: 0, tokens: tail });
  return segments;
}
