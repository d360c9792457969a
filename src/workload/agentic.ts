/**
 * Synthetic agentic-coding sessions calibrated to the published Claude Code statistics
 * (workloads.md §3/§6: median main-agent input ≈195K tokens, median output ≈317, ≥90% prefix
 * reuse on ~96% of turns, sub-agent fan-out, heavy-tailed think times). Each turn appends the
 * previous answer and a tool result to the history; past `maxContextTokens` the agent compacts
 * (a fresh summary after the shared system prompt), which is what breaks reuse on the other turns.
 */
import { AgentSession, type StreamPlan, type TurnPlan } from "./agent-session.ts";
import { Rng } from "./rng.ts";
import { blockSegments, makeRequest, type Segment } from "./types.ts";

/** Generator parameters; the defaults reproduce the statistics above (see agentic.test.ts). */
export interface AgenticOptions {
  systemTokens: number;
  firstMessageMedian: number;
  turnsMedian: number;
  growthMedian: number;
  /** Log-space sigma of the per-turn growth. */
  growthSigma: number;
  outputMedian: number;
  thinkMedianMs: number;
  /** Think times above this are cut, ms. */
  thinkCapMs: number;
  maxContextTokens: number;
  /** Probability that a main turn fans out to 1–3 sub-agents. */
  subagentProbability: number;
  seed: number;
}

/** Calibrated defaults. */
export const AGENTIC_DEFAULTS: Omit<AgenticOptions, "seed"> = {
  systemTokens: 15_000,
  firstMessageMedian: 20_000,
  turnsMedian: 110,
  growthMedian: 2_400,
  growthSigma: 0.7,
  outputMedian: 317,
  thinkMedianMs: 10_000,
  thinkCapMs: 60_000,
  maxContextTokens: 400_000,
  subagentProbability: 0.01,
};

interface Stream {
  rng: Rng;
  ns: string;
  history: Segment[];
  context: number;
  kind: string;
  /** Next segment id in this stream's namespace (each appended message is unique content). */
  nextId: number;
}

function grow(s: Stream, tokens: number): void {
  s.history.push({ ns: s.ns, id: s.nextId++, tokens });
  s.context += tokens;
}

function turn(s: Stream, k: number, o: AgenticOptions, thinkMs: number, growth: number): TurnPlan {
  const output = Math.max(1, Math.round(s.rng.lognormal(o.outputMedian, 1)));
  return {
    thinkMs,
    build: () => {
      if (k > 0 && s.context + growth > o.maxContextTokens) compact(s, o);
      if (k > 0) grow(s, growth);
      const request = makeRequest(`${s.ns}:${k}`, s.history.slice(), output, {
        sessionId: s.ns,
        kind: s.kind,
      });
      grow(s, output);
      return request;
    },
  };
}

function compact(s: Stream, o: AgenticOptions): void {
  s.history = blockSegments("agentic:sys", 0, o.systemTokens, 64);
  s.context = o.systemTokens;
  grow(s, Math.round(s.rng.lognormal(20_000, 0.3)));
}

function stream(
  rng: Rng,
  ns: string,
  kind: string,
  systemNs: string,
  systemTokens: number,
  first: number,
): Stream {
  const history = blockSegments(systemNs, 0, systemTokens, 64);
  const s: Stream = { rng, ns, kind, history, context: systemTokens, nextId: 0 };
  grow(s, Math.max(1, Math.round(first)));
  return s;
}

function subagent(rng: Rng, ns: string, o: AgenticOptions): StreamPlan {
  const s = stream(rng, ns, "sub-agent", "agentic:sub-sys", 8_000, rng.lognormal(2_000, 0.5));
  const count = 3 + rng.int(8);
  const turns: TurnPlan[] = [];
  for (let k = 0; k < count; k++) turns.push(turn(s, k, o, k === 0 ? 0 : 1000, rng.lognormal(1_500, 0.8)));
  return { turns };
}

/** Session factory for `ClosedLoopWorkload`. */
export function agenticSession(o: AgenticOptions, index: number): AgentSession {
  const rng = new Rng(`agentic:${o.seed}:${index}`);
  const ns = `agentic:${o.seed}:${index}`;
  const main = stream(
    rng,
    ns,
    "main",
    "agentic:sys",
    o.systemTokens,
    rng.lognormal(o.firstMessageMedian, 0.8),
  );
  const count = Math.min(400, Math.max(2, Math.round(rng.lognormal(o.turnsMedian, 0.9))));
  const turns: TurnPlan[] = [];
  for (let k = 0; k < count; k++) {
    const thinkMs = k === 0 ? 0 : Math.min(o.thinkCapMs, rng.lognormal(o.thinkMedianMs, 1.6));
    const plan = turn(main, k, o, thinkMs, Math.round(rng.lognormal(o.growthMedian, o.growthSigma)));
    if (rng.next() < o.subagentProbability) {
      const fanOut = 1 + rng.int(3);
      plan.spawns = [];
      for (let j = 0; j < fanOut; j++)
        plan.spawns.push({ delayMs: 0, stream: subagent(rng, `${ns}:sub${k}.${j}`, o) });
    }
    turns.push(plan);
  }
  return new AgentSession({ turns });
}
