/**
 * `approx-prefix-cache-producer`: llm-d's default producer of `PrefixCacheMatchInfo` (reference
 * §2.5, §2.7). Hashes the prompt's token blocks, matches them against a router-side index of
 * what each endpoint was sent, and after the decision optimistically records the prompt as
 * cached on the chosen endpoint(s).
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import {
  type PrefixCacheMatchInfo,
  type PrefixMatchResult,
  PrefixIndex,
  readPrefixMatch,
} from "../../../kv-index/index.ts";
import type { Tokenizer } from "../../../tokenizer/tokenizer.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO, TOKENIZED_PROMPT } from "../../framework/data-keys.ts";
import type {
  DataProducer,
  PreRequest,
  ResponseHooks,
  ResponseUsage,
  SchedulingContext,
  SchedulingRequest,
  SchedulingResult,
  TerminationCause,
} from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import type { HostedPlugin, PluginMetric } from "../../framework/hosted.ts";
import { chosenEndpoints } from "../shared/chosen-endpoints.ts";
import { nextTurn, YIELD_TOKENS, yieldAfter } from "../shared/next-turn.ts";
import { CachedTokensFeedback } from "./cached-tokens-feedback.ts";
import {
  promptBlockCount,
  promptBlockHashes,
  promptTextHashesInHalves,
  promptTokenCount,
} from "../shared/prompt-pieces.ts";

/** llm-d floors the block size at 64 tokens at runtime, whatever is configured or scraped. */
export const MIN_BLOCK_SIZE_TOKENS = 64;
const CHARS_PER_TOKEN = 4;

/**
 * Blocks hashed before matching (4K tokens at 64 a block): a prompt is hashed further before
 * dispatch only when some endpoint holds all of them.
 */
const PROBE_BLOCKS = 64;

const parameters = z
  .strictObject({
    autoTune: z.boolean().default(true),
    blockSizeTokens: z.int().positive().default(16),
    maxPrefixBlocksToMatch: z.int().nonnegative().default(2048),
    maxPrefixTokensToMatch: z.int().nonnegative().default(131072),
    lruCapacityPerServer: z.int().positive().default(31250),
    /** llmd: scale each endpoint's LRU by what its answers' `cached_tokens` show it really kept. */
    learnCapacityFromCachedTokens: z.boolean().default(false),
    /** Deprecated: block size in characters (4 per token). */
    blockSize: z.int().positive().optional(),
  })
  .prefault({});

/** Validated parameters of `approx-prefix-cache-producer`. */
export type ApproxPrefixParams = z.infer<typeof parameters>;

/**
 * The producer instance: also a PreRequest (optimistic insert). `index` is exposed for metrics.
 * Started by the live host, it yields to the event loop after hashing 32K tokens or more of a
 * prompt, so that hashing and the filters, scorers and hooks after it are two event-loop blocks,
 * and hashes a text prompt of 64K tokens or more in two halves; the fleet simulator starts no
 * plugin and decides synchronously.
 */
export class ApproxPrefixCacheProducer implements DataProducer, PreRequest, HostedPlugin {
  readonly type = "approx-prefix-cache-producer";
  readonly index: PrefixIndex;
  /** Where this instance publishes its `PrefixMatchResult` in `ctx.state`. */
  readonly stateKey: string;
  private settleTimer: ReturnType<typeof setTimeout> | undefined;
  private live = false;

  constructor(
    readonly name: string,
    private readonly params: ApproxPrefixParams,
    private readonly tokenizer: Tokenizer,
  ) {
    this.index = new PrefixIndex(params.lruCapacityPerServer);
    this.stateKey = attributeKey(PREFIX_CACHE_MATCH_INFO, name);
  }

  /**
   * Hashes the prompt's blocks, token ids when a token producer already set them, else the text
   * directly (4 characters per token, identical block boundaries; a chat's message strings in
   * place, see `promptPieces`): this producer never tokenizes, so the estimate path costs one
   * pass over the hashed characters. Only the first `PROBE_BLOCKS` are hashed unless some
   * endpoint holds all of them: matches are leading runs, so past a block no endpoint holds
   * nothing can match, and a long prompt no endpoint holds is hashed on only for its insert, after
   * the request has left (`preRequest`).
   */
  produce(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void | Promise<void> {
    const request = ctx.request;
    const blockSizeTokens = this.blockSizeFor(endpoints);
    if (this.params.autoTune) this.tuneCapacities(endpoints, blockSizeTokens);
    const maxBlocks = this.maxBlocks(blockSizeTokens);
    const totalBlocks = promptBlockCount(request, blockSizeTokens, maxBlocks);
    const keys = endpoints.map((e) => e.metadata.key);
    const probe = promptBlockHashes(request, blockSizeTokens, Math.min(maxBlocks, PROBE_BLOCKS));
    const probed = this.matchAll(probe, keys);
    if (probe.length === totalBlocks || Math.max(0, ...probed) < probe.length) {
      this.publish(ctx, probe, probed, keys, totalBlocks, blockSizeTokens);
      return;
    }
    if (this.live && !request.tokens && totalBlocks * blockSizeTokens >= 2 * YIELD_TOKENS)
      return this.hashInHalves(ctx, keys, totalBlocks, blockSizeTokens);
    const hashes = promptBlockHashes(request, blockSizeTokens, maxBlocks);
    this.publish(ctx, hashes, this.matchAll(hashes, keys), keys, totalBlocks, blockSizeTokens);
    if (this.live) return yieldAfter(hashes.length * blockSizeTokens);
  }

  /**
   * Live, a long text prompt whose probe some endpoint holds is hashed whole in two event-loop
   * blocks, and the decision goes on in a third.
   */
  private async hashInHalves(
    ctx: SchedulingContext,
    keys: readonly string[],
    totalBlocks: number,
    blockSizeTokens: number,
  ): Promise<void> {
    const hashes = await promptTextHashesInHalves(ctx.request, blockSizeTokens, totalBlocks, nextTurn);
    this.publish(ctx, hashes, this.matchAll(hashes, keys), keys, totalBlocks, blockSizeTokens);
    await nextTurn();
  }

  private publish(
    ctx: SchedulingContext,
    hashes: Float64Array,
    matched: Int32Array,
    keys: readonly string[],
    totalBlocks: number,
    blockSizeTokens: number,
  ): void {
    const byEndpoint = new Map<string, PrefixCacheMatchInfo>();
    for (let i = 0; i < keys.length; i++) {
      byEndpoint.set(keys[i]!, { matchBlocks: matched[i]!, totalBlocks, blockSizeTokens });
    }
    const result: PrefixMatchResult = {
      blockSizeTokens,
      promptTokens: promptTokenCount(ctx.request, this.tokenizer),
      hashes,
      byEndpoint,
    };
    ctx.state.set(this.stateKey, result);
  }

  async start(): Promise<void> {
    this.live = true;
  }

  endpointsChanged(): void {}

  async close(): Promise<void> {
    this.live = false;
  }

  metrics(): readonly PluginMetric[] {
    return [];
  }

  /**
   * Records the prompt as held by each chosen endpoint. The insert (thousands of blocks for a
   * long prompt, each new one evicting an old one) only records what is sent, so it is applied
   * after the request has left (`settleSoon`); the index applies it before anything reads it, so
   * the next request still sees it. A prompt hashed only to its probe is hashed whole then too.
   */
  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    const match = readPrefixMatch(ctx.state, this.stateKey);
    if (!match) return;
    const { blockSizeTokens } = match;
    const maxBlocks = this.maxBlocks(blockSizeTokens);
    const totalBlocks = promptBlockCount(ctx.request, blockSizeTokens, maxBlocks);
    const hashes =
      match.hashes.length < totalBlocks ? wholePrompt(ctx.request, blockSizeTokens, maxBlocks) : match.hashes;
    for (const endpoint of chosenEndpoints(result)) {
      this.index.insertLater(endpoint.metadata.key, hashes, totalBlocks);
    }
    this.settleSoon();
  }

  /**
   * Settles the index on a timer: timers run on a later turn of the event loop than the host's
   * dispatch of this request (its upstream write included), so the insert stays off its path.
   * One timer at a time; an index read before it fires settles first.
   */
  private settleSoon(): void {
    if (this.settleTimer) return;
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      this.index.settle();
    }, 0);
    this.settleTimer.unref();
  }

  /** Each endpoint's matched leading blocks of `hashes`, aligned with `keys`. */
  private matchAll(hashes: Float64Array, keys: readonly string[]): Int32Array {
    const matched = new Int32Array(keys.length);
    this.index.match(hashes, hashes.length, keys, matched);
    return matched;
  }

  /** Block size in tokens: configured (or scraped with autoTune), floored at 64. */
  blockSizeFor(endpoints: readonly Endpoint[]): number {
    const { blockSize, blockSizeTokens, autoTune } = this.params;
    let size = blockSize === undefined ? blockSizeTokens : Math.ceil(blockSize / CHARS_PER_TOKEN);
    if (autoTune) {
      let scraped = 0;
      for (const e of endpoints) scraped = Math.max(scraped, e.metrics.cacheBlockSize);
      if (scraped > 0) size = scraped;
    }
    return Math.max(MIN_BLOCK_SIZE_TOKENS, size);
  }

  private maxBlocks(blockSizeTokens: number): number {
    const { maxPrefixTokensToMatch, maxPrefixBlocksToMatch } = this.params;
    if (maxPrefixTokensToMatch > 0) return Math.max(1, Math.floor(maxPrefixTokensToMatch / blockSizeTokens));
    return maxPrefixBlocksToMatch;
  }

  /**
   * Sizes each endpoint's LRU to its real KV capacity, converted from engine blocks into index
   * blocks (llm-d uses the engine block count as is, overstating capacity by the block ratio).
   */
  private tuneCapacities(endpoints: readonly Endpoint[], blockSizeTokens: number): void {
    for (const e of endpoints) {
      if (e.metrics.cacheNumBlocks > 0) this.applyCapacity(e, blockSizeTokens);
    }
  }

  /** Sets `endpoint`'s LRU to its base capacity (scraped with autoTune, else configured) times `capacityScale`. */
  protected applyCapacity(endpoint: Endpoint, blockSizeTokens: number): void {
    const { cacheNumBlocks, cacheBlockSize } = endpoint.metrics;
    let base = this.params.lruCapacityPerServer;
    if (this.params.autoTune && cacheNumBlocks > 0) {
      base = Math.floor(
        (cacheNumBlocks * (cacheBlockSize > 0 ? cacheBlockSize : blockSizeTokens)) / blockSizeTokens,
      );
    }
    const key = endpoint.metadata.key;
    this.index.setCapacity(key, Math.max(1, Math.floor(base * this.capacityScale(key))));
  }

  /** Factor on an endpoint's base capacity: 1 here; learned from answers with `learnCapacityFromCachedTokens`. */
  protected capacityScale(_endpointKey: string): number {
    return 1;
  }
}

/**
 * With `learnCapacityFromCachedTokens`, also a ResponseHooks: each answer's `cached_tokens` against
 * the match predicted for its endpoint moves that endpoint's capacity (see `cached-tokens-feedback.ts`).
 */
export class LearningApproxPrefixCacheProducer extends ApproxPrefixCacheProducer implements ResponseHooks {
  readonly feedback = new CachedTokensFeedback();

  onResponseComplete(
    ctx: SchedulingContext,
    endpoint: Endpoint,
    cause: TerminationCause,
    usage: ResponseUsage | undefined,
  ): void {
    if (cause !== "natural" || !usage || usage.promptTokens <= 0) return;
    const match = readPrefixMatch(ctx.state, this.stateKey);
    const info = match?.byEndpoint.get(endpoint.metadata.key);
    if (!match || !info || match.promptTokens <= 0) return;
    const moved = this.feedback.observe(endpoint.metadata.key, {
      predicted: Math.min(1, (info.matchBlocks * info.blockSizeTokens) / match.promptTokens),
      observed: usage.cachedTokens / usage.promptTokens,
      block: info.blockSizeTokens / match.promptTokens,
    });
    if (moved !== undefined) this.applyCapacity(endpoint, info.blockSizeTokens);
  }

  protected override capacityScale(endpointKey: string): number {
    return this.feedback.scale(endpointKey);
  }
}

/** Registry entry for `approx-prefix-cache-producer`. */
export const definition: PluginDefinition<ApproxPrefixParams> = {
  type: "approx-prefix-cache-producer",
  stability: "beta",
  description:
    "Router-side approximate prefix index: per-endpoint matched prompt blocks (PrefixCacheMatchInfo)",
  parameters,
  produces: [PREFIX_CACHE_MATCH_INFO],
  // Without a configured token-producer it hashes the prompt text in the estimate tokenizer's
  // blocks itself, so none is auto-added (llm-d adds one that would tokenize every prompt first).
  uses: [TOKENIZED_PROMPT],
  create: (params, env) =>
    params.learnCapacityFromCachedTokens
      ? new LearningApproxPrefixCacheProducer(env.name, params, env.tokenizer)
      : new ApproxPrefixCacheProducer(env.name, params, env.tokenizer),
};

/**
 * The prompt's keys to its last block, computed once when first asked for (at the index's settle,
 * which may come after the request completed: the body's bytes are held until then).
 */
function wholePrompt(
  request: SchedulingRequest,
  blockSizeTokens: number,
  maxBlocks: number,
): () => Float64Array {
  let hashes: Float64Array | undefined;
  const done = request.bodyHolder?.hold();
  return () => {
    if (!hashes) {
      try {
        hashes = promptBlockHashes(request, blockSizeTokens, maxBlocks);
      } finally {
        done?.();
      }
    }
    return hashes;
  };
}
