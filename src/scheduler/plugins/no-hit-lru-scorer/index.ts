/**
 * `no-hit-lru-scorer` (reference §2.4): spreads cold requests (no prefix hit on any candidate)
 * over the endpoints least recently given a cold request, so new prefixes do not pile up on one
 * endpoint. Warm requests score 0.5 everywhere (neutral).
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { readPrefixMatch } from "../../../kv-index/index.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import type {
  PreRequest,
  ResponseHooks,
  SchedulingContext,
  SchedulingResult,
  Scorer,
} from "../../framework/types.ts";
import type { Plugin, PluginDefinition } from "../../../plugin/types.ts";
import { chosenEndpoints } from "../shared/chosen-endpoints.ts";
import { inFlightStateKey } from "../shared/inflight-load.ts";
import { excludeBusy, isCold } from "./cold.ts";
import { kvCapacityTokens, SessionFootprints } from "./footprint.ts";
import { placeByFootprint } from "./placement.ts";

const parameters = z
  .strictObject({
    prefixPluginType: z.string().min(1).default("prefix-cache-scorer"),
    prefixPluginName: z.string().min(1).default("prefix-cache-scorer"),
    lruSize: z.int().positive().default(1024),
    coldMatchRatio: z.number().min(0).max(1).default(0),
    coldMaxAdvantage: z.number().min(0).max(1).default(0.1),
    coldLoadMargin: z.int().nonnegative().optional(),
    coldLoadMarginExemptHeader: z.string().min(1).optional(),
    coldPlacement: z.enum(["lru", "footprint"]).default("lru"),
    footprintIdleSeconds: z.number().positive().default(90),
    sessionHeader: z.string().min(1).default("x-session-id"),
    inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
  })
  .prefault({});

/** Validated parameters of `no-hit-lru-scorer`. */
export type NoHitLruParams = z.infer<typeof parameters>;

const WARM_SCORE = 0.5;
const DEFAULT_PREFIX_STATE_KEY = attributeKey(PREFIX_CACHE_MATCH_INFO);

/**
 * Scorer, PreRequest (records which endpoint took each cold request, and with `coldPlacement:
 * footprint` each named session's prompt) and ResponseHooks (a session's idle window starts when
 * its request completes).
 */
export class NoHitLruScorer implements Scorer, PreRequest, ResponseHooks {
  readonly type = "no-hit-lru-scorer";
  readonly category = "distribution";
  /** Endpoint keys that took cold requests, least recent first (at most lruSize). */
  private readonly recent = new Set<string>();
  private readonly coldKey: string;
  private readonly loadStateKey: string;
  private prefixStateKey: string | undefined;
  /** Scratch for the candidates' match ratios or loads (reused, grown on demand). */
  private scratch = new Float64Array(64);
  /** Scratch for footprint placement: the candidates' KV capacities. */
  private capacities = new Float64Array(64);
  /** With `coldPlacement: footprint`: live sessions' prompt tokens per endpoint. */
  private readonly footprints: SessionFootprints | undefined;
  /** Scratch for a cold request: each candidate's index by endpoint key (cleared per call). */
  private readonly positions = new Map<string, number>();
  /** `sessionHeader` and `coldLoadMarginExemptHeader`, lower-cased as request headers are. */
  private readonly sessionHeader: string;
  private readonly exemptHeader: string | undefined;

  constructor(
    readonly name: string,
    private readonly params: NoHitLruParams,
    private readonly lookup: (name: string) => Plugin | undefined,
  ) {
    this.coldKey = `${name}/cold`;
    this.loadStateKey = inFlightStateKey(params.inFlightLoadProducerName);
    this.sessionHeader = params.sessionHeader.toLowerCase();
    this.exemptHeader = params.coldLoadMarginExemptHeader?.toLowerCase();
    this.footprints =
      params.coldPlacement === "footprint"
        ? new SessionFootprints(params.footprintIdleSeconds * 1000)
        : undefined;
  }

  score(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const scores = new Float64Array(endpoints.length);
    const match = readPrefixMatch(ctx.state, this.matchStateKey());
    if (this.scratch.length < endpoints.length) this.scratch = new Float64Array(endpoints.length * 2);
    const cold = isCold(match, endpoints, this.params, this.scratch);
    ctx.state.set(this.coldKey, cold);
    if (!cold) return scores.fill(WARM_SCORE);
    const position = this.positions;
    position.clear();
    for (let i = 0; i < endpoints.length; i++) position.set(endpoints[i]!.metadata.key, i);
    let used = 0;
    for (const key of this.recent) if (position.has(key)) used++;
    // Never-used endpoints score 1; used ones from used/(used+1) (oldest) down to 1/(used+1).
    scores.fill(1);
    let rank = 0;
    for (const key of this.recent) {
      const i = position.get(key);
      if (i !== undefined) scores[i] = (used - rank++) / (used + 1);
    }
    const session = this.session(ctx);
    if (this.footprints && session !== "") this.byFootprint(ctx, endpoints, scores, session);
    const margin = this.params.coldLoadMargin;
    if (margin !== undefined && !this.namesSession(ctx))
      excludeBusy(scores, ctx.state, this.loadStateKey, endpoints, margin, this.scratch);
    return scores;
  }

  /** A named session's cold request: placed by the KV its candidates' live sessions hold. */
  private byFootprint(
    ctx: SchedulingContext,
    endpoints: readonly Endpoint[],
    scores: Float64Array,
    session: string,
  ): void {
    const n = endpoints.length;
    if (this.capacities.length < n) this.capacities = new Float64Array(n * 2);
    const now = ctx.clock.now();
    const footprint = this.scratch.subarray(0, n);
    const capacity = this.capacities.subarray(0, n);
    for (let i = 0; i < n; i++) {
      footprint[i] = this.footprints!.of(endpoints[i]!.metadata.key, now, session);
      capacity[i] = kvCapacityTokens(endpoints[i]!);
    }
    placeByFootprint(scores, footprint, capacity, requestTokens(ctx));
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    this.recordFootprint(ctx, result);
    if (ctx.state.get(this.coldKey) !== true) return;
    for (const endpoint of chosenEndpoints(result)) {
      const key = endpoint.metadata.key;
      this.recent.delete(key);
      this.recent.add(key);
      if (this.recent.size > this.params.lruSize) this.recent.delete(this.recent.values().next().value!);
    }
  }

  /** Every scheduled request of a named session counts its prompt on the endpoint it runs on. */
  private recordFootprint(ctx: SchedulingContext, result: SchedulingResult): void {
    const session = this.session(ctx);
    if (!this.footprints || session === "") return;
    const endpoint = chosenEndpoints(result)[0];
    if (endpoint) this.footprints.record(session, endpoint.metadata.key, requestTokens(ctx), ctx.clock.now());
  }

  /** A named session's request completed: its footprint stays counted for the idle window from now. */
  onResponseComplete(ctx: SchedulingContext, endpoint: Endpoint): void {
    const session = this.session(ctx);
    if (this.footprints && session !== "")
      this.footprints.complete(session, endpoint.metadata.key, ctx.clock.now());
  }

  /** The request's `sessionHeader` value ("" when absent). */
  private session(ctx: SchedulingContext): string {
    const value = ctx.request.headers[this.sessionHeader];
    return typeof value === "string" ? value : "";
  }

  /** True when the request carries a non-empty `coldLoadMarginExemptHeader` (none configured: false). */
  private namesSession(ctx: SchedulingContext): boolean {
    if (this.exemptHeader === undefined) return false;
    const value = ctx.request.headers[this.exemptHeader];
    return typeof value === "string" && value !== "";
  }

  /**
   * The prefix data to read: that of the plugin named `prefixPluginName` (a prefix scorer's
   * producer, or a producer itself), resolved on first use since plugins may be created in any order.
   */
  private matchStateKey(): string {
    if (this.prefixStateKey !== undefined) return this.prefixStateKey;
    const plugin = this.lookup(this.params.prefixPluginName) as
      | { prefixMatchStateKey?: unknown; stateKey?: unknown }
      | undefined;
    const key = plugin?.prefixMatchStateKey ?? plugin?.stateKey;
    this.prefixStateKey = typeof key === "string" ? key : DEFAULT_PREFIX_STATE_KEY;
    return this.prefixStateKey;
  }
}

/** The prompt's length in tokens (the host's count, else 4 characters per token). */
function requestTokens(ctx: SchedulingContext): number {
  return ctx.request.inputTokens ?? Math.ceil(ctx.request.promptText.length / 4);
}

/** Registry entry for `no-hit-lru-scorer`. */
export const definition: PluginDefinition<NoHitLruParams> = {
  type: "no-hit-lru-scorer",
  stability: "beta",
  description: "Cold requests prefer endpoints least recently given a cold request; warm → 0.5",
  parameters,
  consumes: [PREFIX_CACHE_MATCH_INFO], // coldLoadMargin reads IN_FLIGHT_LOAD only if configured
  create: (params, env) => new NoHitLruScorer(env.name, params, env.lookup),
};
