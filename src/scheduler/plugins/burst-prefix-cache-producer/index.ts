/**
 * `burst-prefix-cache-producer` (llm-d, alpha): co-locates bursts of prompt-sharing requests (the
 * `n` samples of an RL rollout group) so their shared prefix is prefilled once instead of on every
 * cold replica. Requests arriving within `windowDurationMs` wait for the window to close, are
 * placed jointly (assign.ts), and each gets `PrefixCacheMatchInfo`: a full match on its assigned
 * replica, none elsewhere (none anywhere when it is in no unit). `prefix-cache-scorer` with
 * `prefixMatchInfoProducerName: burst-prefix-cache-producer` turns that into the placement.
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PrefixMatchResult } from "../../../kv-index/index.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import type { Tokenizer } from "../../../tokenizer/tokenizer.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO, TOKENIZED_PROMPT } from "../../framework/data-keys.ts";
import type { DataProducer, SchedulingContext } from "../../framework/types.ts";
import { promptBlockHashes, promptTokenCount } from "../shared/prompt-pieces.ts";
import { assignBurst, type BurstEntry, UNLIMITED } from "./assign.ts";

/** Leading blocks that form a prompt's identity when `maxPrefixTokensToMatch` is 0 (llm-d's). */
const DEFAULT_MAX_PREFIX_BLOCKS = 2048;

const unlimitedOr = (min: number) =>
  z.int().refine((n) => n === UNLIMITED || n >= min, { message: `expected -1 (unlimited) or >= ${min}` });

const parameters = z
  .strictObject({
    windowDurationMs: z.int().positive().default(100),
    maxPerReplica: unlimitedOr(1).default(UNLIMITED),
    blockSizeTokens: z.int().positive().default(64),
    maxPrefixTokensToMatch: z.int().nonnegative().default(0),
    minColocateBlocks: z.int().nonnegative().default(0),
    maxBatchSize: unlimitedOr(1).default(1000),
  })
  .prefault({});

/** Validated parameters of `burst-prefix-cache-producer`. */
export type BurstPrefixParams = z.output<typeof parameters>;

/** One waiting request: its entry in the window and what it needs to publish its match. */
interface Waiting {
  entry: BurstEntry;
  ctx: SchedulingContext;
  endpoints: readonly Endpoint[];
  release: () => void;
}

/** See the module comment. */
export class BurstPrefixCacheProducer implements DataProducer {
  readonly type = "burst-prefix-cache-producer";
  /** Where this instance publishes its `PrefixMatchResult` in `ctx.state`. */
  readonly stateKey: string;
  private readonly maxBlocks: number;
  private window: Waiting[] | undefined;

  constructor(
    readonly name: string,
    private readonly params: BurstPrefixParams,
    private readonly tokenizer: Tokenizer,
  ) {
    this.stateKey = attributeKey(PREFIX_CACHE_MATCH_INFO, name);
    const { maxPrefixTokensToMatch: maxTokens, blockSizeTokens } = params;
    this.maxBlocks =
      maxTokens > 0 ? Math.max(1, Math.floor(maxTokens / blockSizeTokens)) : DEFAULT_MAX_PREFIX_BLOCKS;
  }

  /** Joins the open window (opening one if none) and resolves when it closes and is placed. */
  produce(ctx: SchedulingContext, endpoints: readonly Endpoint[]): Promise<void> | undefined {
    const { maxBatchSize, windowDurationMs } = this.params;
    if (this.window && maxBatchSize !== UNLIMITED && this.window.length >= maxBatchSize) return undefined;
    if (!this.window) {
      const window: Waiting[] = [];
      this.window = window;
      setTimeout(() => this.close(window), windowDurationMs);
    }
    const waiting = this.window;
    return new Promise<void>((release) => {
      const hashes = promptBlockHashes(ctx.request, this.params.blockSizeTokens, this.maxBlocks);
      waiting.push({ entry: { hashes }, ctx, endpoints, release });
    });
  }

  /** Places the window's requests, publishes each one's match and releases them. */
  private close(window: Waiting[]): void {
    if (this.window === window) this.window = undefined;
    const first = window[0]!.endpoints;
    const replicas = first.map((e) => ({ key: e.metadata.key, running: e.metrics.runningRequestsSize }));
    assignBurst(
      window.map((w) => w.entry),
      replicas,
      this.params.maxPerReplica,
      this.params.minColocateBlocks,
    );
    for (const w of window) {
      w.ctx.state.set(this.stateKey, this.result(w));
      w.release();
    }
  }

  private result({ entry, ctx, endpoints }: Waiting): PrefixMatchResult {
    const { hashes, assigned } = entry;
    const blockSizeTokens = this.params.blockSizeTokens;
    const byEndpoint = new Map(
      endpoints.map((e) => {
        const matchBlocks = e.metadata.key === assigned ? hashes.length : 0;
        return [e.metadata.key, { matchBlocks, totalBlocks: hashes.length, blockSizeTokens }];
      }),
    );
    return {
      blockSizeTokens,
      promptTokens: promptTokenCount(ctx.request, this.tokenizer),
      hashes,
      byEndpoint,
    };
  }
}

/** Registry entry for `burst-prefix-cache-producer`. */
export const definition: PluginDefinition<BurstPrefixParams> = {
  type: "burst-prefix-cache-producer",
  stability: "alpha",
  description:
    "Co-locates bursts of prompt-sharing requests (RL rollout groups) within a window (PrefixCacheMatchInfo)",
  parameters,
  produces: [PREFIX_CACHE_MATCH_INFO],
  uses: [TOKENIZED_PROMPT],
  create: (params, env) => new BurstPrefixCacheProducer(env.name, params, env.tokenizer),
};
