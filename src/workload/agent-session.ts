/**
 * Closed-loop agent sessions: a main stream of turns, each issued a think time after the previous
 * one ended; a turn may spawn sub-agent streams that run concurrently, and the parent's next turn
 * waits until they have all finished (Claude Code's Task tool blocks the main agent).
 */
import type { WorkloadRequest } from "./types.ts";

/** One turn of a stream. `build` runs when the turn is issued (histories grow lazily). */
export interface TurnPlan {
  /** Client delay before this turn, ms (after the previous turn and any sub-agents ended). */
  thinkMs: number;
  build(): WorkloadRequest;
  /** Sub-agents started when this turn completes; `delayMs` from that completion. */
  spawns?: { delayMs: number; stream: StreamPlan }[];
}

/** An ordered list of turns (a main agent or a sub-agent). */
export interface StreamPlan {
  turns: TurnPlan[];
}

/** A request to issue `delayMs` after the event that caused it. */
export interface Delayed {
  delayMs: number;
  request: WorkloadRequest;
}

interface StreamState {
  plan: StreamPlan;
  next: number;
  outstandingChildren: number;
  parent: StreamState | undefined;
}

/** Runs one session's streams; the pool owning it turns delays into absolute times. */
export class AgentSession {
  private readonly byRequest = new Map<string, StreamState>();
  private live = 0;

  constructor(private readonly main: StreamPlan) {}

  /** True once every stream has issued and completed all its turns. */
  get done(): boolean {
    return this.live === 0;
  }

  /** First request(s) of the session. */
  start(): Delayed[] {
    const out: Delayed[] = [];
    this.startStream({ plan: this.main, next: 0, outstandingChildren: 0, parent: undefined }, 0, out);
    return out;
  }

  /** A request of this session ended; returns what it causes. */
  onComplete(requestId: string): Delayed[] {
    const stream = this.byRequest.get(requestId);
    if (!stream) return [];
    this.byRequest.delete(requestId);
    const out: Delayed[] = [];
    const turn = stream.plan.turns[stream.next - 1]!;
    for (const spawn of turn.spawns ?? []) {
      stream.outstandingChildren++;
      const child = { plan: spawn.stream, next: 0, outstandingChildren: 0, parent: stream };
      this.startStream(child, spawn.delayMs, out);
    }
    if (stream.outstandingChildren === 0) this.advance(stream, 0, out);
    return out;
  }

  private startStream(stream: StreamState, delayMs: number, out: Delayed[]): void {
    this.live++;
    this.advance(stream, delayMs, out);
  }

  private advance(stream: StreamState, delayMs: number, out: Delayed[]): void {
    const turn = stream.plan.turns[stream.next];
    if (!turn) {
      this.finish(stream, out);
      return;
    }
    stream.next++;
    const request = turn.build();
    this.byRequest.set(request.id, stream);
    out.push({ delayMs: delayMs + turn.thinkMs, request });
  }

  private finish(stream: StreamState, out: Delayed[]): void {
    this.live--;
    const parent = stream.parent;
    if (parent && --parent.outstandingChildren === 0) this.advance(parent, 0, out);
  }
}
