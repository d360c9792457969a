/**
 * `prefill-volume-scorer` (llmd-only): prefers endpoints that were recently given less prefill
 * work. Each endpoint keeps an exponentially decayed sum of the uncached prompt tokens this router
 * sent it, so the score remembers placements for minutes, where in-flight token load forgets a
 * request at its first token. A long conversation placed on an endpoint keeps that endpoint's KV
 * cache busy for its whole life; balancing recent prefill spreads new conversations by what they
 * will cost, not by the momentary queue.
 */
import { z } from "zod";
import type { Clock } from "../../../core/clock.ts";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { IN_FLIGHT_LOAD } from "../../framework/data-keys.ts";
import type {
  PluginDefinition,
  PreRequest,
  SchedulingContext,
  SchedulingResult,
  Scorer,
} from "../../framework/types.ts";
import { chosenEndpoints } from "../shared/chosen-endpoints.ts";
import { inFlightStateKey, readEndpointLoad } from "../shared/inflight-load.ts";

const parameters = z
  .strictObject({
    halfLifeSeconds: z.number().positive().default(60),
    inFlightLoadProducerName: z.string().min(1).default("inflight-load-producer"),
  })
  .prefault({});

/** Validated parameters of `prefill-volume-scorer`. */
export type PrefillVolumeParams = z.infer<typeof parameters>;

/** Decayed prefill tokens of one endpoint, valid at `atMs`. */
interface Volume {
  tokens: number;
  atMs: number;
}

/**
 * Score = `(max − v) / max` over the candidates, v = the endpoint's decayed prefill tokens
 * (half-life `halfLifeSeconds`); all 1 when no candidate has any. PreRequest adds the request's
 * uncached prompt tokens on each chosen endpoint (as `inflight-load-producer` estimated them).
 */
export class PrefillVolumeScorer implements Scorer, PreRequest {
  readonly type = "prefill-volume-scorer";
  readonly category = "distribution";
  private readonly volumes = new Map<string, Volume>();
  private readonly loadKey: string;
  private readonly decayPerMs: number;

  constructor(
    readonly name: string,
    params: PrefillVolumeParams,
    private readonly clock: Clock,
  ) {
    this.loadKey = inFlightStateKey(params.inFlightLoadProducerName);
    this.decayPerMs = Math.LN2 / (params.halfLifeSeconds * 1000);
  }

  score(_ctx: SchedulingContext, endpoints: readonly Endpoint[]): Float64Array {
    const scores = new Float64Array(endpoints.length);
    const now = this.clock.now();
    let max = 0;
    for (let i = 0; i < endpoints.length; i++) {
      scores[i] = this.volumeAt(endpoints[i]!.metadata.key, now);
      max = Math.max(max, scores[i]!);
    }
    for (let i = 0; i < scores.length; i++) scores[i] = max === 0 ? 1 : (max - scores[i]!) / max;
    return scores;
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    const now = this.clock.now();
    for (const endpoint of chosenEndpoints(result)) {
      const key = endpoint.metadata.key;
      const tokens =
        this.volumeAt(key, now) + readEndpointLoad(ctx.state, this.loadKey, key).requestUncachedTokens;
      const volume = this.volumes.get(key);
      if (volume) {
        volume.tokens = tokens;
        volume.atMs = now;
      } else this.volumes.set(key, { tokens, atMs: now });
    }
  }

  /** Decayed volume of `key` at `nowMs` (0 for an endpoint never given work). */
  volumeAt(key: string, nowMs: number): number {
    const volume = this.volumes.get(key);
    if (!volume) return 0;
    return volume.tokens * Math.exp(-this.decayPerMs * Math.max(0, nowMs - volume.atMs));
  }
}

/** Registry entry for `prefill-volume-scorer`. */
export const definition: PluginDefinition<PrefillVolumeParams> = {
  type: "prefill-volume-scorer",
  stability: "alpha",
  description: "Scores endpoints by the uncached prompt tokens recently sent to them (decayed; least → 1)",
  parameters,
  consumes: [IN_FLIGHT_LOAD],
  create: (params, env) => new PrefillVolumeScorer(env.name, params, env.clock),
};
