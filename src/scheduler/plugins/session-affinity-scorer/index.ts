/**
 * `session-affinity-scorer` (alpha): 1 for the session's endpoint, 0 elsewhere; a soft pin that
 * load scorers can outweigh. See ../shared/session-affinity.ts for strategies and the token.
 */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PreRequest, SchedulingContext, SchedulingResult, Scorer } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import {
  SessionAffinity,
  type SessionAffinityParams,
  sessionAffinityParameters,
} from "../shared/session-affinity.ts";

/** Scorer and PreRequest (emits the session token / binds the session). */
export class SessionAffinityScorer implements Scorer, PreRequest {
  readonly type = "session-affinity-scorer";
  readonly category = "affinity";

  constructor(
    readonly name: string,
    readonly affinity: SessionAffinity,
  ) {}

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const scores = new Float64Array(endpoints.length);
    const bound = this.affinity.boundEndpoint(ctx, endpoints);
    if (bound) scores[endpoints.indexOf(bound)] = 1;
    return scores;
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    this.affinity.record(ctx, result);
  }
}

/** Registry entry for `session-affinity-scorer`. */
export const definition: PluginDefinition<SessionAffinityParams> = {
  type: "session-affinity-scorer",
  stability: "alpha",
  description: "Scores 1 for the session's endpoint (x-session-token header or session id), else 0",
  parameters: sessionAffinityParameters,
  create: (params, env) =>
    new SessionAffinityScorer(env.name, new SessionAffinity(env.name, params, env.clock)),
};
