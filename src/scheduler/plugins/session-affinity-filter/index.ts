/**
 * `session-affinity-filter` (alpha): hard pin to the session's endpoint; never returns empty
 * (an unknown or vanished endpoint keeps all candidates). See ../shared/session-affinity.ts.
 */
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { Filter, PreRequest, SchedulingContext, SchedulingResult } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import {
  SessionAffinity,
  type SessionAffinityParams,
  sessionAffinityParameters,
} from "../shared/session-affinity.ts";

/** Filter and PreRequest (emits the session token / binds the session). */
export class SessionAffinityFilter implements Filter, PreRequest {
  readonly type = "session-affinity-filter";

  constructor(
    readonly name: string,
    readonly affinity: SessionAffinity,
  ) {}

  filter(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    const bound = this.affinity.boundEndpoint(ctx, endpoints);
    return bound ? [bound] : endpoints;
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    this.affinity.record(ctx, result);
  }
}

/** Registry entry for `session-affinity-filter`. */
export const definition: PluginDefinition<SessionAffinityParams> = {
  type: "session-affinity-filter",
  stability: "alpha",
  description: "Pins a session to its endpoint (x-session-token header or session id); never empty",
  parameters: sessionAffinityParameters,
  create: (params, env) =>
    new SessionAffinityFilter(env.name, new SessionAffinity(env.name, params, env.clock)),
};
