/**
 * The precise prefix cache shared by `precise-prefix-cache-producer` and the monolithic
 * `precise-prefix-cache-scorer` (reference §2.4, §4): llm-d's parameters, the `PreciseIndex` fed by
 * a `KvEventSubscriber`, and the per-request match published as `PrefixCacheMatchInfo`.
 */
import { z } from "zod";
import { durationMsSchema, quantitySchema } from "../../../core/units.ts";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import { KvEventSubscriber } from "../../../kv-events/subscriber.ts";
import {
  blockCount,
  DEFAULT_TIERS,
  type IndexKvEvent,
  PreciseIndex,
  type PrefixCacheMatchInfo,
  type PrefixMatchResult,
  readPrefixMatch,
} from "../../../kv-index/index.ts";
import type { Clock } from "../../../core/clock.ts";
import type { Tokenizer } from "../../../tokenizer/tokenizer.ts";
import { attributeKey, PREFIX_CACHE_MATCH_INFO } from "../../framework/data-keys.ts";
import type { HostedPlugin, KvEventConsumer, PluginMetric } from "../../framework/hosted.ts";
import type { SchedulingContext, SchedulingResult } from "../../framework/types.ts";
import { chosenEndpoints } from "./chosen-endpoints.ts";

/** Memory budget of the index when `costAwareMemoryConfig.size` does not set one. */
export const DEFAULT_INDEX_BYTES = 1024 ** 3;
/**
 * Records of each kind a live index makes room for when it starts (within its byte budget): its
 * storage then doubles only past about a million blocks, and the room costs virtual memory only.
 */
const LIVE_RESERVED_RECORDS = 1 << 20;

const tokenProcessorConfig = z
  .strictObject({
    blockSize: z.int().positive().optional(),
    blockSizeTokens: z.int().positive().optional(),
    hashSeed: z.string().default(""),
    hashAlgorithm: z
      .enum(["cbor-fnv", "xxh64"])
      .default("cbor-fnv")
      .refine((v) => v === "cbor-fnv", { message: 'only "cbor-fnv" request keys are implemented' }),
  })
  .prefault({});

const kvBlockIndexConfig = z
  .strictObject({
    inMemoryConfig: z
      .strictObject({ size: z.int().positive().optional(), podCacheSize: z.int().positive().optional() })
      .optional(),
    /** Byte budget (a Quantity like "2Gi" or a number of bytes). */
    costAwareMemoryConfig: z.strictObject({ size: quantitySchema.optional() }).optional(),
    redisConfig: z.looseObject({}).optional(),
    enableMetrics: z.boolean().default(false),
    /** Nanoseconds, as llm-d's Go config; llmd exports the numbers on /metrics instead of logging them. */
    metricsLoggingInterval: z.number().nonnegative().optional(),
  })
  .refine((v) => v.redisConfig === undefined, {
    message: "redisConfig is not implemented: the index is in memory",
  })
  .prefault({});

const indexerConfig = z
  .strictObject({
    kvBlockIndexConfig,
    kvCacheBackendConfigs: z
      .array(z.strictObject({ name: z.string().min(1), weight: z.number().min(0) }))
      .min(1)
      .default([...DEFAULT_TIERS]),
    /** Deprecated in llm-d: tokenization is the token producer's. */
    tokenizersPoolConfig: z.looseObject({}).optional(),
  })
  .prefault({});

const kvEventsConfig = z
  .strictObject({
    zmqEndpoint: z.string().min(1).default("tcp://*:5557"),
    topicFilter: z.string().default("kv@"),
    /** Accepted; one event loop applies every pod's events in order. */
    concurrency: z.int().positive().default(4),
    engineType: z.enum(["vllm", "sglang"]).default("vllm"),
    discoverPods: z.boolean().default(true),
    podDiscoveryConfig: z
      .strictObject({
        podLabelSelector: z.string().optional(),
        podNamespace: z.string().optional(),
        socketPort: z.int().min(1).max(65535).default(5557),
        /** 0: no replay socket. */
        replaySocketPort: z.int().min(0).max(65535).default(0),
      })
      .prefault({}),
    replayTimeout: durationMsSchema.default(2000),
  })
  .prefault({});

/** `precise-prefix-cache-producer`'s parameters (llm-d's names and defaults). */
export const precisePrefixParameters = z
  .strictObject({
    tokenProcessorConfig,
    indexerConfig,
    kvEventsConfig,
    speculativeIndexing: z.boolean().default(false),
    speculativeTTL: durationMsSchema.default(2000),
  })
  .prefault({});

/** Validated parameters. */
export type PrecisePrefixParams = z.infer<typeof precisePrefixParameters>;

/** Index, subscriber and matching for one plugin instance. Hosted: sockets open on `start`. */
export class PrecisePrefixCache implements Omit<HostedPlugin, "type" | "name"> {
  readonly index: PreciseIndex;
  readonly blockSizeTokens: number;
  /** Where the match is published in `ctx.state`. */
  readonly stateKey: string;
  private subscriber: KvEventSubscriber | undefined;
  private known = new Set<string>();
  private started = false;
  private keying: NodeJS.Immediate | undefined;

  constructor(
    producerName: string,
    private readonly params: PrecisePrefixParams,
    private readonly tokenizer: Tokenizer,
    private readonly clock: Clock,
  ) {
    const { tokenProcessorConfig: tokens, indexerConfig: indexer } = params;
    this.blockSizeTokens = tokens.blockSizeTokens ?? tokens.blockSize ?? 16;
    this.index = new PreciseIndex({
      blockSizeTokens: this.blockSizeTokens,
      hashSeed: tokens.hashSeed,
      tiers: indexer.kvCacheBackendConfigs,
      maxBytes: indexer.kvBlockIndexConfig.costAwareMemoryConfig?.size ?? DEFAULT_INDEX_BYTES,
      speculativeTtlMs: params.speculativeTTL,
    });
    this.stateKey = attributeKey(PREFIX_CACHE_MATCH_INFO, producerName);
  }

  /** Matches the request's tokens (`request.tokens`, else the router's tokenizer, then kept there) against the index. */
  produce(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void {
    const request = ctx.request;
    // Tokenized once per request: later plugins read the same `request.tokens`.
    const tokens = (request.tokens ??= this.tokenizer.encode(request.promptText));
    const blockSizeTokens = this.blockSizeTokens;
    // The trailing partial block counts, as the approximate producer counts it: no engine caches
    // it, so the same prompt with the same tokens cached has the same match ratio under both.
    const totalBlocks = blockCount(tokens.length, blockSizeTokens);
    const endpointKeys = endpoints.map((e) => e.metadata.key);
    // Keys only as far as a match reaches: a prompt nobody holds costs one key.
    const matched = this.index.matchTokens(tokens, request.model, endpointKeys, this.clock.now());
    const byEndpoint = new Map<string, PrefixCacheMatchInfo>();
    for (let i = 0; i < endpointKeys.length; i++) {
      byEndpoint.set(endpointKeys[i]!, {
        matchBlocks: matched.blocks[i]!,
        totalBlocks,
        blockSizeTokens,
        weightedMatchBlocks: matched.weighted[i]!,
      });
    }
    const result: PrefixMatchResult = {
      blockSizeTokens,
      promptTokens: tokens.length,
      hashes: matched.keys,
      byEndpoint,
    };
    ctx.state.set(this.stateKey, result);
  }

  /** The chosen endpoints hold the prompt's blocks until `speculativeTTL` passes (with `speculativeIndexing`). */
  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    const tokens = ctx.request.tokens;
    const match = readPrefixMatch(ctx.state, this.stateKey);
    if (!match || !tokens) return;
    const now = this.clock.now();
    for (const endpoint of chosenEndpoints(result))
      this.index.insertSpeculative(tokens, ctx.request.model, endpoint.metadata.key, now, match.hashes);
    this.keyWhenIdle();
  }

  /**
   * Started by a live host (until closed): its producer then yields after a long prompt's match,
   * and pending speculative entries are also keyed in idle loop turns.
   */
  get live(): boolean {
    return this.started;
  }

  /**
   * Live, keys what a decision left pending a slice per event-loop turn (`setImmediate`, after the
   * sockets were polled), so it is done within milliseconds and not in the next decisions' blocks.
   * Unstarted (the fleet simulator), the index calls alone key it, at the same slice a call.
   */
  private keyWhenIdle(): void {
    if (!this.started || this.keying || !this.index.speculationPending) return;
    this.keying = setImmediate(() => {
      this.keying = undefined;
      if (this.index.keySpeculative(this.clock.now())) this.keyWhenIdle();
    });
  }

  async start(): Promise<void> {
    this.started = true;
    this.index.reserve(LIVE_RESERVED_RECORDS);
    const events = this.params.kvEventsConfig;
    const pods = events.podDiscoveryConfig;
    this.subscriber = new KvEventSubscriber(
      {
        discoverPods: events.discoverPods,
        zmqEndpoint: events.zmqEndpoint,
        topicFilter: events.topicFilter,
        socketPort: pods.socketPort,
        replaySocketPort: pods.replaySocketPort,
        replayTimeoutMs: events.replayTimeout,
        engineType: events.engineType,
      },
      {
        apply: (batch, podKey, model) => this.kvEvents(batch, podKey, model),
        reset: (podKeys) => {
          for (const key of podKeys) this.index.clearPod(key);
        },
      },
    );
    await this.subscriber.start();
  }

  /** Applies one endpoint's event batch now (from the subscriber, or the fleet simulator's engines). */
  kvEvents(events: readonly IndexKvEvent[], podKey: string, model: string): void {
    this.index.apply(events, podKey, model, this.clock.now());
  }

  /** Follows the pool: subscribes to new endpoints' hosts and forgets the blocks of removed ones. */
  endpointsChanged(endpoints: readonly Endpoint[]): void {
    const now = new Set(endpoints.map((e) => e.metadata.key));
    for (const key of this.known) if (!now.has(key)) this.index.clearPod(key);
    this.known = now;
    this.subscriber?.setPods(endpoints.map((e) => e.metadata));
  }

  async close(): Promise<void> {
    this.started = false;
    clearImmediate(this.keying);
    this.keying = undefined;
    this.subscriber?.close();
  }

  /** True when routing decisions add speculative entries. */
  get speculativeIndexing(): boolean {
    return this.params.speculativeIndexing;
  }

  /** The subscriber, once started (for its counters). */
  get events(): KvEventSubscriber | undefined {
    return this.subscriber;
  }

  metrics(): readonly PluginMetric[] {
    const p = "llm_d_epp_kv_cache_";
    const index = () => this.index.stats();
    const events = () => this.subscriber?.stats();
    const gauge = (name: string, help: string, value: () => number): PluginMetric => ({
      name: p + name,
      help,
      type: "gauge",
      value,
    });
    const counter = (name: string, help: string, value: () => number): PluginMetric => ({
      name: p + name,
      help,
      type: "counter",
      value,
    });
    return [
      gauge("index_size_bytes", "Estimated memory of the precise prefix index", () => index().bytes),
      gauge("index_keys", "Request block keys held by at least one endpoint", () => index().keys),
      gauge(
        "index_entries",
        "(block key, endpoint) entries of the precise prefix index",
        () => index().holders,
      ),
      gauge(
        "speculative_pending_blocks",
        "Blocks of routing decisions' speculative entries not yet keyed",
        () => this.index.pendingSpeculativeBlocks,
      ),
      counter(
        "index_evicted_blocks_total",
        "Engine blocks forgotten to stay within the byte budget",
        () => index().evictedBlocks,
      ),
      counter("events_stored_blocks_total", "Blocks stored by KV events", () => index().storedBlocks),
      counter("events_removed_blocks_total", "Blocks removed by KV events", () => index().removedBlocks),
      counter(
        "events_orphan_blocks_total",
        "Stored blocks dropped because their parent was unknown",
        () => index().orphanBlocks,
      ),
      counter("events_batches_total", "Event batches applied", () => events()?.applied ?? 0),
      counter("events_gaps_total", "Sequence gaps and mid-stream joins", () => events()?.gaps ?? 0),
      counter("events_replays_total", "Replays requested", () => events()?.replays ?? 0),
      counter(
        "events_replay_failures_total",
        "Replays that failed or timed out",
        () => events()?.replayFailures ?? 0,
      ),
      counter(
        "events_restarts_total",
        "Publisher restarts seen (sequence went backwards)",
        () => events()?.restarts ?? 0,
      ),
      counter("events_lost_total", "Event batches never applied", () => events()?.lost ?? 0),
      counter(
        "events_duplicates_total",
        "Event batches dropped as already applied",
        () => events()?.duplicates ?? 0,
      ),
      counter(
        "events_unknown_pod_total",
        "Event batches from publishers that are no endpoint of the pool",
        () => events()?.unknownPod ?? 0,
      ),
    ];
  }
}

/**
 * A plugin built on a `PrecisePrefixCache` (the producer and the monolithic scorer): its hosted
 * lifecycle and the fleet's direct event feed are the cache's.
 */
export abstract class PreciseCachePlugin implements HostedPlugin, KvEventConsumer {
  abstract readonly type: string;

  constructor(
    readonly name: string,
    /** The index and subscriber (read by tests, benchmarks and the fleet's direct feed). */
    readonly cache: PrecisePrefixCache,
  ) {}

  start(): Promise<void> {
    return this.cache.start();
  }

  endpointsChanged(endpoints: readonly Endpoint[]): void {
    this.cache.endpointsChanged(endpoints);
  }

  kvEvents(events: readonly IndexKvEvent[], endpointKey: string, model: string): void {
    this.cache.kvEvents(events, endpointKey, model);
  }

  close(): Promise<void> {
    return this.cache.close();
  }

  metrics(): readonly PluginMetric[] {
    return this.cache.metrics();
  }
}
