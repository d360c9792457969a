/**
 * A fixed number of concurrent sessions; a finished session is replaced at once by a fresh one
 * (seeded draw), so offered load is set by concurrency, not by a rate.
 */
import type { AgentSession, Delayed } from "./agent-session.ts";
import type { Arrival, Workload, WorkloadRequest } from "./types.ts";

/** Creates the plan of session number `index` (0-based, counts replacements too). */
export type SessionFactory = (index: number) => AgentSession;

/** Options of a closed-loop workload. */
export interface ClosedLoopOptions {
  name: string;
  /** Sessions kept running at once (≥ 1). */
  concurrency: number;
  /** Initial sessions start spread evenly over this window, ms (avoids a synchronized burst). */
  rampMs: number;
  /** No new session starts at or after this time, ms (Infinity = never stop). */
  stopAtMs: number;
  factory: SessionFactory;
}

/** Closed-loop workload over `AgentSession`s. */
export class ClosedLoopWorkload implements Workload {
  readonly name: string;
  private readonly owner = new Map<string, AgentSession>();
  private readonly initial: Arrival[] = [];
  private started = 0;
  private cursor = 0;

  constructor(private readonly options: ClosedLoopOptions) {
    this.name = options.name;
    for (let i = 0; i < options.concurrency; i++) {
      const at = (options.rampMs * i) / options.concurrency;
      this.initial.push(...this.open(at));
    }
    this.initial.sort((a, b) => a.atMs - b.atMs);
  }

  /** Sessions started so far (initial plus replacements). */
  get sessionsStarted(): number {
    return this.started;
  }

  nextArrival(): Arrival | undefined {
    return this.initial[this.cursor++];
  }

  onComplete(request: WorkloadRequest, endMs: number): Arrival[] {
    const session = this.owner.get(request.id);
    if (!session) return [];
    this.owner.delete(request.id);
    const out = this.place(session, session.onComplete(request.id), endMs);
    if (session.done && endMs < this.options.stopAtMs) out.push(...this.open(endMs));
    return out;
  }

  private open(atMs: number): Arrival[] {
    const session = this.options.factory(this.started++);
    return this.place(session, session.start(), atMs);
  }

  private place(session: AgentSession, delayed: Delayed[], atMs: number): Arrival[] {
    return delayed.map(({ delayMs, request }) => {
      this.owner.set(request.id, session);
      return { atMs: atMs + delayMs, request };
    });
  }
}
