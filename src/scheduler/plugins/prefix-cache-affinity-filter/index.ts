/**
 * `prefix-cache-affinity-filter` (llm-d's current default recipe; reference §2.4): keeps the
 * endpoints whose prefix match is strong enough, unless none is, or sticking would cost more
 * TTFT than `maxTTFTPenaltyMs` over the best non-sticky endpoint, or an exploration draw hits.
 * Escaping keeps every endpoint (llm-d) or, with `escapeTo: fastest`, only those whose estimated
 * TTFT is within the penalty of the fastest; `attentionContextTokens` prices long prefills by
 * their context, not linearly.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { matchRatio, readPrefixMatch } from "../../../kv-index/index.ts";
import { attributeKey, IN_FLIGHT_LOAD, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import type { Filter, SchedulingContext } from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { inFlightStateKey, readEndpointLoad } from "../shared/inflight-load.ts";

const parameters = z
  .strictObject({
    affinityThreshold: z.number().min(0).max(1).default(0.8),
    explorationProbability: z.number().min(0).max(1).default(0),
    maxTTFTPenaltyMs: z.number().nonnegative().default(18000),
    ttftSource: z.enum(["prefillThroughput", "latencyPredictor"]).default("prefillThroughput"),
    peakPrefillThroughput: z.number().positive().default(15928),
    escapeTo: z.enum(["all", "fastest", "idle"]).default("all"),
    attentionContextTokens: z.int().positive().optional(),
    escapeHeader: z.string().min(1).optional(),
    prefixMatchInfoProducerName: z.string().min(1).default("approx-prefix-cache-producer"),
    inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
  })
  .prefault({});

/** Validated parameters of `prefix-cache-affinity-filter`. */
export type PrefixAffinityParams = z.infer<typeof parameters>;

/** The filter instance; `random` is a uniform [0,1) source (exploration draws). */
export class PrefixCacheAffinityFilter implements Filter {
  readonly type = "prefix-cache-affinity-filter";
  private readonly prefixKey: string;
  private readonly loadKey: string;

  constructor(
    readonly name: string,
    private readonly params: PrefixAffinityParams,
    private readonly random: () => number,
  ) {
    this.prefixKey = attributeKey(PREFIX_CACHE_MATCH_INFO, params.prefixMatchInfoProducerName);
    this.loadKey = inFlightStateKey(params.inFlightLoadProducerName);
  }

  filter(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    const match = readPrefixMatch(ctx.state, this.prefixKey);
    if (!match) return endpoints;
    const sticky = endpoints.filter(
      (e) => matchRatio(match.byEndpoint.get(e.metadata.key)) >= this.params.affinityThreshold,
    );
    if (sticky.length === 0 || sticky.length === endpoints.length) return endpoints;
    if (this.params.explorationProbability > 0 && this.random() < this.params.explorationProbability) {
      return endpoints;
    }
    if (!this.mayEscape(ctx) || !this.stickinessTooCostly(ctx, sticky, endpoints)) return sticky;
    if (this.params.escapeTo === "all") return endpoints;
    const fastest = this.fastest(ctx, endpoints);
    if (this.params.escapeTo === "fastest") return fastest;
    const idle = fastest.filter((e) => this.queueMs(ctx, e) === 0);
    return idle.length > 0 ? idle : sticky;
  }

  /** With `escapeHeader` h, only a request carrying a non-empty h may escape. */
  private mayEscape(ctx: SchedulingContext): boolean {
    const header = this.params.escapeHeader;
    if (header === undefined) return true;
    const value = ctx.request.headers[header.toLowerCase()];
    return typeof value === "string" && value !== "";
  }

  /**
   * The endpoints whose estimated TTFT is within `maxTTFTPenaltyMs` of the fastest one's. After
   * an escape the sticky endpoints are not among them, so the prefix scorer cannot pull the
   * request back into the queue it escaped; the scorers choose among endpoints that start it soon.
   */
  private fastest(ctx: SchedulingContext, endpoints: readonly Endpoint[]): readonly Endpoint[] {
    const ttft = endpoints.map((e) => this.estimatedTtftMs(ctx, e));
    const limit =
      ttft.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY) + this.params.maxTTFTPenaltyMs;
    return endpoints.filter((_, i) => ttft[i]! <= limit);
  }

  /**
   * True when the best sticky endpoint's estimated TTFT exceeds the best non-sticky one's by more
   * than `maxTTFTPenaltyMs` (0 = always stick). Estimated TTFT = (in-flight uncached tokens + this
   * request's uncached tokens there) / peakPrefillThroughput. Counting the request's own tokens
   * (llm-d counts only the queue) credits the sticky endpoint with the prefill it saves.
   * `latencyPredictor` uses the same estimate (llmd has no latency predictor).
   */
  private stickinessTooCostly(
    ctx: SchedulingContext,
    sticky: readonly Endpoint[],
    endpoints: readonly Endpoint[],
  ): boolean {
    const penalty = this.params.maxTTFTPenaltyMs;
    if (penalty === 0) return false;
    let bestSticky = Number.POSITIVE_INFINITY;
    let bestOther = Number.POSITIVE_INFINITY;
    for (const e of endpoints) {
      const ttft = this.estimatedTtftMs(ctx, e);
      if (sticky.includes(e)) bestSticky = Math.min(bestSticky, ttft);
      else bestOther = Math.min(bestOther, ttft);
    }
    return bestSticky - bestOther > penalty;
  }

  private estimatedTtftMs(ctx: SchedulingContext, endpoint: Endpoint): number {
    const load = readEndpointLoad(ctx.state, this.loadKey, endpoint.metadata.key);
    const own = load.requestUncachedTokens;
    if (this.params.attentionContextTokens === undefined)
      return ((load.tokens + own) / this.params.peakPrefillThroughput) * 1000;
    const prompt = readPrefixMatch(ctx.state, this.prefixKey)?.promptTokens ?? own;
    return this.queueMs(ctx, endpoint) + this.workMs(own, own * (prompt - own + own / 2));
  }

  /**
   * Estimated prefill time still ahead on `endpoint`: its in-flight uncached tokens, with
   * `attentionContextTokens` priced by their attention work and less the time the oldest of them
   * has been prefilling.
   */
  private queueMs(ctx: SchedulingContext, endpoint: Endpoint): number {
    const load = readEndpointLoad(ctx.state, this.loadKey, endpoint.metadata.key);
    if (this.params.attentionContextTokens === undefined)
      return (load.tokens / this.params.peakPrefillThroughput) * 1000;
    const doneMs = load.prefillSinceMs === undefined ? 0 : ctx.clock.now() - load.prefillSinceMs;
    return Math.max(0, this.workMs(load.tokens, load.prefillAttention ?? 0) - doneMs);
  }

  /**
   * With `attentionContextTokens` L: prefilling `tokens` new tokens whose attention work is
   * `attention` (Σ new × (cached + new/2), token²) takes (tokens + attention / L) / peak: n new
   * tokens after p cached ones cost n / peak × (1 + (p + n/2) / L), since attention's cost per new
   * token grows with the context it attends to (a 139 K prompt from scratch: 4.9× its linear cost
   * at L = 18 K).
   */
  private workMs(tokens: number, attention: number): number {
    const equivalentTokens = tokens + attention / this.params.attentionContextTokens!;
    return (equivalentTokens / this.params.peakPrefillThroughput) * 1000;
  }
}

/** Registry entry for `prefix-cache-affinity-filter`. */
export const definition: PluginDefinition<PrefixAffinityParams> = {
  type: "prefix-cache-affinity-filter",
  stability: "beta",
  description: "Keeps endpoints with a strong prefix match unless that costs too much TTFT (else all)",
  parameters,
  consumes: [PREFIX_CACHE_MATCH_INFO, IN_FLIGHT_LOAD],
  create: (params, env) => new PrefixCacheAffinityFilter(env.name, params, env.random ?? Math.random),
};
