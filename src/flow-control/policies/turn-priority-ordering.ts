/**
 * `turn-priority-ordering-policy` (llmd extension): inside a band, an agent session's later turns
 * (prefix already cached, session closer to done) are not starved behind new sessions.
 *
 * Definition: an item's virtual arrival is `enqueuedAt − min(turns, maxCreditedTurns) × turnCreditMs`,
 * where `turns` is how many turns its session already had dispatched. That is FCFS with a bounded
 * head start per completed turn, and equals ranking by `turns·turnCreditMs + timeInQueue`: a new
 * session that has waited longer than the credit still overtakes, so nothing starves. Because the
 * key is fixed at enqueue, queues stay exact heaps.
 */
import type { FlowItem, OrderingPolicy } from "../types.ts";

/** Parameters of the turn-priority ordering policy. */
export interface TurnPriorityParams {
  /** Head start (ms of queue time) granted per completed turn. */
  turnCreditMs: number;
  /** Turns beyond this earn no more credit (bounds the maximum head start). */
  maxCreditedTurns: number;
  /** Sessions idle this long (ms) lose their turn count. */
  sessionIdleTtlMs: number;
}

interface SessionTurns {
  turns: number;
  lastSeen: number;
}

/** The policy plus its session table size (for tests and metrics). */
export interface TurnPriorityOrdering extends OrderingPolicy {
  /** Turns recorded for `sessionId` (0 when unknown). */
  turnsOf(sessionId: string): number;
  readonly sessionCount: number;
}

/** Builds a `turn-priority-ordering-policy` instance. */
export function turnPriorityOrdering(
  params: TurnPriorityParams,
  name = "turn-priority-ordering-policy",
): TurnPriorityOrdering {
  const sessions = new Map<string, SessionTurns>();
  let lastSweep = Number.NEGATIVE_INFINITY;

  const turnsOf = (sessionId: string): number => sessions.get(sessionId)?.turns ?? 0;

  const sweep = (now: number): void => {
    if (now - lastSweep < params.sessionIdleTtlMs) return;
    lastSweep = now;
    for (const [id, session] of sessions) {
      if (now - session.lastSeen > params.sessionIdleTtlMs) sessions.delete(id);
    }
  };

  return {
    type: "turn-priority-ordering-policy",
    name,
    kind: "ordering",
    turnsOf,
    get sessionCount() {
      return sessions.size;
    },
    sortKey(item: FlowItem): number {
      const turns = item.turn ?? (item.sessionId === undefined ? 0 : turnsOf(item.sessionId));
      return item.enqueuedAt - Math.min(turns, params.maxCreditedTurns) * params.turnCreditMs;
    },
    onDispatched(item: FlowItem, now: number): void {
      if (item.sessionId === undefined) return;
      const session = sessions.get(item.sessionId);
      if (session) {
        session.turns += 1;
        session.lastSeen = now;
      } else sessions.set(item.sessionId, { turns: 1, lastSeen: now });
      sweep(now);
    },
  };
}
