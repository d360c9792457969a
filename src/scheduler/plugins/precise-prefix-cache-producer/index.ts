/**
 * `precise-prefix-cache-producer`: llm-d's producer of `PrefixCacheMatchInfo` from the engines' own
 * KV events (reference §2.4, §4): it subscribes to every endpoint's events over ZeroMQ, keeps the
 * precise index of what each holds on which tier, and matches the request's tokens against it.
 */
import { TOKENIZED_PROMPT, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import type { DataProducer, PreRequest, SchedulingContext, SchedulingResult } from "../../framework/types.ts";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import {
  PreciseCachePlugin,
  PrecisePrefixCache,
  type PrecisePrefixParams,
  precisePrefixParameters,
} from "../shared/precise-prefix.ts";
import { yieldAfter } from "../shared/next-turn.ts";

/**
 * The producer instance; `cache` holds the index (for tests, benchmarks and the fleet's direct
 * feed). Started by the live host, it yields to the event loop after matching a long prompt, so
 * the match over its blocks and the decision's speculative marks of as many (a pre-request hook)
 * are two event-loop blocks, not one.
 */
export class PrecisePrefixCacheProducer extends PreciseCachePlugin implements DataProducer {
  readonly type = "precise-prefix-cache-producer";

  get stateKey(): string {
    return this.cache.stateKey;
  }

  produce(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void | Promise<void> {
    this.cache.produce(ctx, endpoints);
    if (this.cache.live) return yieldAfter(ctx.request.tokens?.length ?? 0);
  }
}

/** With `speculativeIndexing`, the producer is also a PreRequest: a decision adds speculative entries. */
export class SpeculativePrecisePrefixCacheProducer extends PrecisePrefixCacheProducer implements PreRequest {
  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    this.cache.preRequest(ctx, result);
  }
}

/** Registry entry for `precise-prefix-cache-producer`. */
export const definition: PluginDefinition<PrecisePrefixParams> = {
  type: "precise-prefix-cache-producer",
  stability: "beta",
  description:
    "Precise prefix index from the engines' KV events over ZeroMQ: per-endpoint matched blocks by tier",
  parameters: precisePrefixParameters,
  produces: [PREFIX_CACHE_MATCH_INFO],
  consumes: [TOKENIZED_PROMPT],
  create: (params, env) => {
    const cache = new PrecisePrefixCache(env.name, params, env.tokenizer, env.clock);
    return params.speculativeIndexing
      ? new SpeculativePrecisePrefixCacheProducer(env.name, cache)
      : new PrecisePrefixCacheProducer(env.name, cache);
  },
};
