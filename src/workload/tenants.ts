/**
 * Three tenants on one pool, for the flow-control experiments (docs/flow-control-experiments.md):
 * - `chat` (objective `chat`, priority 100 in the examples): multi-turn conversations starting as
 *   a Poisson process, each turn a think time after the previous answer (closed loop per chat);
 * - `agents` (objective `agents`, priority 0): two programs (fairness ids `program-a`,
 *   `program-b`), each firing a burst of `burstSize` sub-agent requests every 1/rate seconds
 *   (±25% jitter; the programs are half a period apart, so their demand is equal); a burst
 *   shares the program's system prompt and the task context, each sub-agent adds its own step;
 * - `batch` (objective `batch`, priority −10): one long prompt with a long output at a steady rate.
 * Every rate is its base rate times `load`; base rates are one fleet capacity of 8 H200 replicas
 * (docs/flow-control-experiments.md, "The workload", gives how that was measured).
 */
import type { AgentSession } from "./agent-session.ts";
import { chatSession } from "./chat.ts";
import { Rng } from "./rng.ts";
import { type Arrival, blockSegments, makeRequest, type Workload, type WorkloadRequest } from "./types.ts";

/** Parameters of the tenant mix; rates are at `load` = 1. */
export interface TenantMixOptions {
  /** Multiple of the base rates (0.5 … 2 in the experiments). */
  load: number;
  /** New chat conversations per second at load 1. */
  chatSessionsPerS: number;
  /** Turns per conversation, inclusive range. */
  chatTurns: [number, number];
  /** Mean think time between chat turns, ms. */
  chatThinkMeanMs: number;
  /** Bursts per second per agent program at load 1 (regular, jittered). */
  agentBurstsPerS: number;
  burstSize: number;
  /** Sub-agents of one burst arrive spread over this window, ms. */
  burstSpreadMs: number;
  agentSystemTokens: number;
  agentTaskTokens: number;
  /** Median of the per-sub-agent step (log-normal, sigma 0.5), tokens. */
  agentStepMedian: number;
  agentOutputMedian: number;
  /** Batch requests per second at load 1 (evenly spaced). */
  batchPerS: number;
  batchInputTokens: number;
  batchOutputTokens: number;
  seed: number;
  /** Arrivals stop here, ms. */
  durationMs: number;
}

/** Base rates and shapes (one fleet capacity of 8 × h200-llama3-8b at load 1). */
export const TENANT_DEFAULTS: Omit<TenantMixOptions, "load" | "seed" | "durationMs"> = {
  chatSessionsPerS: 5.2,
  chatTurns: [4, 8],
  chatThinkMeanMs: 3000,
  agentBurstsPerS: 0.26,
  burstSize: 50,
  burstSpreadMs: 500,
  agentSystemTokens: 4000,
  agentTaskTokens: 2000,
  agentStepMedian: 400,
  agentOutputMedian: 300,
  batchPerS: 5.2,
  batchInputTokens: 8000,
  batchOutputTokens: 1000,
};

/** The two agent programs' fairness ids. */
export const AGENT_PROGRAMS = ["program-a", "program-b"] as const;

interface OpenEvent {
  atMs: number;
  make(): WorkloadRequest;
}

/** See the module comment. Deterministic for given options. */
export class TenantMixWorkload implements Workload {
  readonly name = "tenants";
  private readonly events: OpenEvent[] = [];
  private readonly owner = new Map<string, AgentSession>();
  private cursor = 0;

  constructor(private readonly o: TenantMixOptions) {
    this.planChats();
    for (const [p, program] of AGENT_PROGRAMS.entries()) this.planAgents(program, p);
    this.planBatch();
    this.events.sort((a, b) => a.atMs - b.atMs);
  }

  nextArrival(): Arrival | undefined {
    const event = this.events[this.cursor++];
    return event && { atMs: event.atMs, request: event.make() };
  }

  onComplete(request: WorkloadRequest, endMs: number): Arrival[] {
    const session = this.owner.get(request.id);
    if (!session) return [];
    this.owner.delete(request.id);
    return session
      .onComplete(request.id)
      .map(({ delayMs, request: next }) => this.own(session, next, endMs + delayMs));
  }

  private own(session: AgentSession, request: WorkloadRequest, atMs: number): Arrival {
    this.owner.set(request.id, session);
    request.objective = "chat";
    request.fairnessId = "chat";
    return { atMs, request };
  }

  private planChats(): void {
    const o = this.o;
    const rng = new Rng(`tenants-chat:${o.seed}`);
    const options = {
      commonPrefixTokens: 500,
      conversationPrefixTokens: 1000,
      minTurns: o.chatTurns[0],
      maxTurns: o.chatTurns[1],
      userTokens: [120, 160] as [number, number],
      answerTokens: [80, 120] as [number, number],
      thinkMeanMs: o.chatThinkMeanMs,
      seed: o.seed,
    };
    let index = 0;
    for (const atMs of poissonTimes(rng, o.chatSessionsPerS * o.load, o.durationMs)) {
      const i = index++;
      this.events.push({
        atMs,
        make: () => {
          const session = chatSession(options, i);
          const [first] = session.start();
          return this.own(session, first!.request, atMs).request;
        },
      });
    }
  }

  private planAgents(program: string, p: number): void {
    const o = this.o;
    const rng = new Rng(`tenants-agents:${o.seed}:${program}`);
    const system = blockSegments(`agents:${program}:system`, 0, o.agentSystemTokens, 64);
    let burst = 0;
    for (const atMs of jitteredTimes(
      rng,
      o.agentBurstsPerS * o.load,
      p / AGENT_PROGRAMS.length,
      o.durationMs,
    )) {
      const b = burst++;
      const task = blockSegments(`agents:${program}:task:${b}`, 0, o.agentTaskTokens, 64);
      for (let k = 0; k < o.burstSize; k++) {
        const step = Math.max(16, Math.round(rng.lognormal(o.agentStepMedian, 0.5)));
        const output = Math.max(16, Math.round(rng.lognormal(o.agentOutputMedian, 0.5)));
        const id = `agents:${p}:${b}:${k}`;
        const segments = [...system, ...task, { ns: `${id}:step`, id: 0, tokens: step }];
        this.events.push({
          atMs: atMs + rng.next() * o.burstSpreadMs,
          make: () =>
            makeRequest(id, segments, output, { kind: "agents", objective: "agents", fairnessId: program }),
        });
      }
    }
  }

  private planBatch(): void {
    const o = this.o;
    const rate = o.batchPerS * o.load;
    const gapMs = 1000 / rate;
    const instructions = blockSegments("batch:instructions", 0, 1000, 64);
    for (let i = 0, atMs = gapMs / 2; atMs < o.durationMs; i++, atMs += gapMs) {
      const segments = [...instructions, { ns: "batch:doc", id: i, tokens: o.batchInputTokens - 1000 }];
      this.events.push({
        atMs,
        make: () =>
          makeRequest(`batch:${i}`, segments, o.batchOutputTokens, {
            kind: "batch",
            objective: "batch",
            fairnessId: "batch",
          }),
      });
    }
  }
}

function poissonTimes(rng: Rng, perS: number, durationMs: number): number[] {
  const out: number[] = [];
  if (perS <= 0) return out;
  for (let t = rng.exponential(1000 / perS); t < durationMs; t += rng.exponential(1000 / perS)) out.push(t);
  return out;
}

/** One time per period, starting at `phase` periods, each moved by up to ±25% of a period. */
function jitteredTimes(rng: Rng, perS: number, phase: number, durationMs: number): number[] {
  const out: number[] = [];
  if (perS <= 0) return out;
  const periodMs = 1000 / perS;
  for (let k = phase + 0.5; k * periodMs < durationMs; k++) {
    out.push(Math.max(0, (k + (rng.next() - 0.5) / 2) * periodMs));
  }
  return out;
}
