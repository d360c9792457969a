/**
 * Session affinity shared by `session-affinity-filter` and `session-affinity-scorer` (each
 * instance keeps its own bindings, as in llm-d; reference §2.4, §9). Two strategies:
 * - `encoded_endpoint_header`: the client echoes a response header carrying base64 of the
 *   endpoint key (`namespace/name`, plus `-rank-N` for a data-parallel rank);
 * - `session_id`: a router-side map session id → endpoint; the first pick binds, a binding whose
 *   endpoint is no longer a candidate is rebound, idle bindings expire after a TTL.
 * Response side: at PreRequest the header strategy writes the token into the request's response
 * headers (`ctx.state` key `RESPONSE_HEADERS_STATE_KEY`), which the gateway adds to the response.
 */
import { z } from "zod";
import type { Clock } from "../../../core/clock.ts";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { RESPONSE_HEADERS_STATE_KEY } from "../../framework/data-keys.ts";
import type { SchedulingContext, SchedulingResult } from "../../framework/types.ts";
import { chosenFor } from "./chosen-endpoints.ts";
import { setStateHeader } from "./state-headers.ts";

const source = z.union([
  z.strictObject({ header: z.string().min(1) }),
  z.strictObject({ attribute: z.string().min(1) }),
]);

/** Parameters shared by the filter and the scorer (llm-d names and defaults). */
export const sessionAffinityParameters = z
  .strictObject({
    strategy: z.enum(["encoded_endpoint_header", "session_id"]).default("encoded_endpoint_header"),
    profileName: z.string().min(1).optional(),
    encodedEndpointHeaderConfig: z
      .strictObject({ header: z.string().min(1).default("x-session-token") })
      .prefault({}),
    sessionIdConfig: z
      .strictObject({
        sources: z
          .array(source)
          .min(1)
          .default([{ header: "x-session-id" }]),
        evictionTtlSeconds: z.number().positive().default(300),
        evictionSweepSeconds: z.number().positive().default(10),
      })
      .prefault({}),
  })
  .prefault({});

/** Validated session-affinity parameters. */
export type SessionAffinityParams = z.infer<typeof sessionAffinityParameters>;

/** Session token of an endpoint: base64 of its key (`namespace/name`). */
export function encodeSessionToken(endpoint: Endpoint): string {
  return Buffer.from(endpoint.metadata.key).toString("base64");
}

/** Writes a header for the client response of this request. */
export function setResponseHeader(ctx: SchedulingContext, name: string, value: string): void {
  setStateHeader(ctx, RESPONSE_HEADERS_STATE_KEY, name, value);
}

interface Binding {
  endpointKey: string;
  lastSeenMs: number;
}

/** The bindings and lookups of one plugin instance. */
export class SessionAffinity {
  private readonly bindings = new Map<string, Binding>();
  private readonly boundStateKey: string;
  private readonly header: string;
  private lastSweepMs = 0;

  constructor(
    name: string,
    private readonly params: SessionAffinityParams,
    private readonly clock: Clock,
  ) {
    this.boundStateKey = `${name}/bound`;
    this.header = params.encodedEndpointHeaderConfig.header.toLowerCase();
  }

  /** Live session bindings (session_id strategy). */
  get size(): number {
    return this.bindings.size;
  }

  /** The candidate this request is pinned to, if any; remembered for `record`. */
  boundEndpoint(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Endpoint | undefined {
    const key = this.params.strategy === "session_id" ? this.boundKey(ctx) : this.decodedHeader(ctx);
    const bound = key === undefined ? undefined : endpoints.find((e) => matchesKey(e, key));
    if (bound) ctx.state.set(this.boundStateKey, bound.metadata.key);
    return bound;
  }

  /** PreRequest: emit the token (header strategy) or bind/refresh the session (session_id). */
  record(ctx: SchedulingContext, result: SchedulingResult): void {
    const chosen = chosenFor(result, this.params.profileName);
    if (!chosen) return;
    if (this.params.strategy === "encoded_endpoint_header") {
      setResponseHeader(ctx, this.header, encodeSessionToken(chosen));
      return;
    }
    const sessionId = this.sessionId(ctx);
    if (sessionId === undefined) return;
    const stillBound = ctx.state.get(this.boundStateKey) as string | undefined;
    const endpointKey = stillBound ?? chosen.metadata.key;
    this.bindings.set(sessionId, { endpointKey, lastSeenMs: this.clock.now() });
  }

  private boundKey(ctx: SchedulingContext): string | undefined {
    this.sweep();
    const sessionId = this.sessionId(ctx);
    const binding = sessionId === undefined ? undefined : this.bindings.get(sessionId);
    if (!binding || this.expired(binding)) return undefined;
    return binding.endpointKey;
  }

  private sessionId(ctx: SchedulingContext): string | undefined {
    for (const s of this.params.sessionIdConfig.sources) {
      const value =
        "header" in s ? ctx.request.headers[s.header.toLowerCase()] : ctx.request.attributes.get(s.attribute);
      if (typeof value === "string" && value !== "") return value;
    }
    return undefined;
  }

  private decodedHeader(ctx: SchedulingContext): string | undefined {
    const token = ctx.request.headers[this.header];
    return token ? Buffer.from(token, "base64").toString("utf8") : undefined;
  }

  private expired(binding: Binding): boolean {
    return this.clock.now() - binding.lastSeenMs > this.params.sessionIdConfig.evictionTtlSeconds * 1000;
  }

  /** Drops expired bindings at most once per `evictionSweepSeconds`. */
  private sweep(): void {
    const now = this.clock.now();
    if (now - this.lastSweepMs < this.params.sessionIdConfig.evictionSweepSeconds * 1000) return;
    this.lastSweepMs = now;
    for (const [id, binding] of this.bindings) if (this.expired(binding)) this.bindings.delete(id);
  }
}

/** An endpoint answers to its key, or to `namespace/name` (tokens minted by llm-d). */
function matchesKey(endpoint: Endpoint, key: string): boolean {
  const m = endpoint.metadata;
  return m.key === key || (m.dpRank === undefined && `${m.namespace}/${m.name}` === key);
}
