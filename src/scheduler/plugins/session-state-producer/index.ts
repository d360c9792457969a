/**
 * `session-state-producer` (llm-d's name, alpha): per-session state a scheduler or flow control can
 * use: turns taken (counted at PreRequest), duration, last seen, in-flight and completed requests,
 * input and output tokens. The session is the request's `SessionID` attribute (session-id-producer),
 * else its agent identity, else `x-session-id`, else its Responses chain. Each request sees the
 * state before itself in `ctx.state`; sessions idle longer than `idleTtl` are forgotten, which
 * bounds the table.
 */
import { z } from "zod";
import { durationMsSchema } from "../../../core/units.ts";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { chosenFor } from "../shared/chosen-endpoints.ts";
import {
  AGENT_IDENTITY_ATTRIBUTE,
  attributeKey,
  RESPONSE_CHAIN_ATTRIBUTE,
  SESSION_ID,
  SESSION_STATE,
  type SessionState,
} from "../../framework/data-keys.ts";
import type {
  DataProducer,
  PreRequest,
  ResponseHooks,
  ResponseUsage,
  SchedulingContext,
  SchedulingResult,
  SessionTurns,
  TerminationCause,
} from "../../framework/types.ts";

const parameters = z.strictObject({ idleTtl: durationMsSchema.default(3_600_000) }).prefault({});

/** Validated parameters of `session-state-producer`. */
export type SessionStateParams = z.infer<typeof parameters>;

/** The session a request belongs to, if any (see the module comment). */
export function sessionOf(ctx: SchedulingContext): string | undefined {
  const { attributes, headers } = ctx.request;
  for (const value of [
    attributes.get(attributeKey(SESSION_ID)),
    attributes.get(AGENT_IDENTITY_ATTRIBUTE),
    headers["x-session-id"],
    attributes.get(RESPONSE_CHAIN_ATTRIBUTE),
  ]) {
    if (typeof value === "string" && value) return value;
  }
  return undefined;
}

/** The state of a session before its first request. */
const FRESH: SessionState = Object.freeze({
  turnsTaken: 0,
  durationMs: 0,
  lastSeenAt: 0,
  inFlightRequests: 0,
  completedRequests: 0,
  totalInputTokens: 0,
  totalOutputTokens: 0,
});

interface Session extends SessionState {
  startedAt: number;
}

class SessionStateProducer implements DataProducer, PreRequest, ResponseHooks, SessionTurns {
  readonly type = "session-state-producer";
  private readonly sessions = new Map<string, Session>();
  /** Requests counted at PreRequest, by id, with their session (completion pairs with them). */
  private readonly counted = new Map<string, Session>();
  private readonly stateKey: string;
  private lastSweep = 0;

  constructor(
    readonly name: string,
    private readonly params: SessionStateParams,
  ) {
    this.stateKey = attributeKey(SESSION_STATE, name);
  }

  /** Sessions tracked now. */
  get size(): number {
    return this.sessions.size;
  }

  turnsTaken(sessionId: string): number {
    return this.sessions.get(sessionId)?.turnsTaken ?? 0;
  }

  produce(ctx: SchedulingContext, _endpoints: readonly Endpoint[]): void {
    const id = sessionOf(ctx);
    if (id === undefined) return;
    const session = this.sessions.get(id);
    ctx.state.set(this.stateKey, session ? this.snapshot(session, ctx.clock.now()) : { ...FRESH });
  }

  /** Counts a turn for a decision that picked an endpoint (an empty decision dispatches nothing). */
  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    const id = sessionOf(ctx);
    if (id === undefined || !chosenFor(result) || this.counted.has(ctx.request.requestId)) return;
    const now = ctx.clock.now();
    this.sweep(now);
    let session = this.sessions.get(id);
    if (!session) {
      session = {
        startedAt: now,
        turnsTaken: 0,
        durationMs: 0,
        lastSeenAt: now,
        inFlightRequests: 0,
        completedRequests: 0,
        totalInputTokens: 0,
        totalOutputTokens: 0,
      };
      this.sessions.set(id, session);
    }
    session.turnsTaken += 1;
    session.inFlightRequests += 1;
    session.lastSeenAt = now;
    this.counted.set(ctx.request.requestId, session);
  }

  onResponseComplete(
    ctx: SchedulingContext,
    _endpoint: Endpoint,
    _cause: TerminationCause,
    usage: ResponseUsage | undefined,
  ): void {
    const session = this.counted.get(ctx.request.requestId);
    if (!session) return;
    this.counted.delete(ctx.request.requestId);
    session.inFlightRequests -= 1;
    session.completedRequests += 1;
    session.totalInputTokens += usage?.promptTokens ?? 0;
    session.totalOutputTokens += usage?.completionTokens ?? 0;
    session.lastSeenAt = ctx.clock.now();
  }

  private snapshot(session: Session, now: number): SessionState {
    const { startedAt: _, ...state } = session;
    return { ...state, durationMs: now - session.startedAt };
  }

  /** Forgets sessions idle past the TTL with nothing in flight (at most once per TTL/10). */
  private sweep(now: number): void {
    const ttl = this.params.idleTtl;
    if (now - this.lastSweep < ttl / 10) return;
    this.lastSweep = now;
    for (const [id, session] of this.sessions) {
      if (session.inFlightRequests === 0 && now - session.lastSeenAt > ttl) this.sessions.delete(id);
    }
  }
}

/** Registry entry for `session-state-producer`. */
export const definition: PluginDefinition<SessionStateParams> = {
  type: "session-state-producer",
  stability: "alpha",
  description:
    "Per-session turns, duration, in-flight/completed requests and tokens (state before each request)",
  parameters,
  produces: [SESSION_STATE],
  create: (params, env) => new SessionStateProducer(env.name, params),
};
