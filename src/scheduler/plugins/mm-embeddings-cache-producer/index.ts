/**
 * `mm-embeddings-cache-producer` (llm-d, beta): encoder-cache affinity. Keys each distinct image,
 * video and audio item of a chat request by a hash of its content reference, publishes per endpoint
 * how many of them it already encoded (`EncoderCacheMatchInfo`), and after the decision records the
 * items on the primary profile's targets and the encode profile's pick once the response starts (the
 * encoder has run by the first token; a request that ends before it records nothing).
 */
import { z } from "zod";
import type { Endpoint } from "../../../endpoints/endpoint.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import {
  attributeKey,
  ENCODER_CACHE_MATCH_INFO,
  type EncoderCacheMatchInfo,
} from "../../framework/data-keys.ts";
import type { HostedPlugin, PluginMetric } from "../../framework/hosted.ts";
import type {
  DataProducer,
  PreRequest,
  ResponseHooks,
  SchedulingContext,
  SchedulingResult,
  TerminationCause,
} from "../../framework/types.ts";
import { chosenFor } from "../shared/chosen-endpoints.ts";
import { multimodalItems } from "../shared/multimodal.ts";
import { EncoderCacheIndex } from "./encoder-cache-index.ts";

/** llm-d's default per-endpoint budget (4 GiB) and the size it assumes per tracked item (2 MiB). */
const DEFAULT_CACHE_SIZE_MB = 4096;
const MB_PER_ITEM = 2;

const parameters = z
  .strictObject({
    /** Per-endpoint encoder-cache budget in MiB; ≤ 0 means the default. */
    cacheSizeInMBPerServer: z.int().optional(),
    /** The same budget under the name llm-d's shipped sample config uses. */
    cacheSizeInMB: z.int().optional(),
    /** The E/P/D profile whose pick runs the encoder; its pick is recorded with the primary's. */
    encodeProfile: z.string().min(1).default("encode"),
  })
  .prefault({});

/** Validated parameters of `mm-embeddings-cache-producer`. */
export type MmEmbeddingsCacheParams = z.output<typeof parameters>;

/** Items per endpoint for a MiB budget: budget / 2 MiB, at least 1. */
export function itemsPerEndpoint(params: MmEmbeddingsCacheParams): number {
  const mb = params.cacheSizeInMBPerServer ?? params.cacheSizeInMB ?? DEFAULT_CACHE_SIZE_MB;
  return Math.max(1, Math.floor((mb > 0 ? mb : DEFAULT_CACHE_SIZE_MB) / MB_PER_ITEM));
}

/** What one request carries from produce to its response: its items and where they go. */
interface Pending {
  hashes: string[];
  targets: string[];
}

/** See the module comment. Hosted only to forget endpoints that leave the pool. */
export class MmEmbeddingsCacheProducer implements DataProducer, PreRequest, ResponseHooks, HostedPlugin {
  readonly type = "mm-embeddings-cache-producer";
  readonly index: EncoderCacheIndex;
  /** Where the per-endpoint match is published in `ctx.state`. */
  readonly stateKey: string;
  private readonly pendingKey: string;
  private queries = 0;
  private hits = 0;

  constructor(
    readonly name: string,
    private readonly params: MmEmbeddingsCacheParams,
  ) {
    this.index = new EncoderCacheIndex(itemsPerEndpoint(params));
    this.stateKey = attributeKey(ENCODER_CACHE_MATCH_INFO, name);
    this.pendingKey = `${this.stateKey}/pending`;
  }

  produce(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void {
    const hashes = multimodalItems(ctx.request.body).map((i) => i.hash);
    if (hashes.length === 0) return;
    this.queries += hashes.length;
    for (const hash of hashes) if (this.index.anywhere(hash)) this.hits++;
    const byEndpoint = new Map<string, EncoderCacheMatchInfo>();
    for (const e of endpoints) {
      const key = e.metadata.key;
      byEndpoint.set(key, { matchedItems: this.index.matched(key, hashes), totalItems: hashes.length });
    }
    ctx.state.set(this.stateKey, byEndpoint);
    ctx.state.set(this.pendingKey, { hashes, targets: [] } satisfies Pending);
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    const pending = ctx.state.get(this.pendingKey) as Pending | undefined;
    if (!pending) return;
    const targets = result.profileResults.get(result.primaryProfileName)?.targetEndpoints ?? [];
    const encoder = chosenFor(result, this.params.encodeProfile);
    pending.targets = [...new Set([...targets, ...(encoder ? [encoder] : [])].map((e) => e.metadata.key))];
  }

  onFirstToken(ctx: SchedulingContext): void {
    this.commit(ctx);
  }

  onResponseComplete(ctx: SchedulingContext, _endpoint: Endpoint, cause: TerminationCause): void {
    if (cause === "natural") this.commit(ctx);
    ctx.state.delete(this.pendingKey);
  }

  private commit(ctx: SchedulingContext): void {
    const pending = ctx.state.get(this.pendingKey) as Pending | undefined;
    if (!pending) return;
    ctx.state.delete(this.pendingKey);
    for (const key of pending.targets) this.index.insert(key, pending.hashes);
  }

  async start(): Promise<void> {}

  endpointsChanged(endpoints: readonly Endpoint[]): void {
    this.index.retain(new Set(endpoints.map((e) => e.metadata.key)));
  }

  async close(): Promise<void> {}

  metrics(): readonly PluginMetric[] {
    return [
      {
        name: "llm_d_router_epp_encoder_cache_queries_total",
        help: "Multimodal item hash lookups against the encoder-cache affinity index.",
        type: "counter",
        value: () => this.queries,
      },
      {
        name: "llm_d_router_epp_encoder_cache_hits_total",
        help: "Multimodal item hash lookups that found the item on some endpoint.",
        type: "counter",
        value: () => this.hits,
      },
    ];
  }
}

/** Registry entry for `mm-embeddings-cache-producer`. */
export const definition: PluginDefinition<MmEmbeddingsCacheParams> = {
  type: "mm-embeddings-cache-producer",
  stability: "beta",
  description: "Encoder-cache affinity: per-endpoint matched image/video/audio items (EncoderCacheMatchInfo)",
  parameters,
  produces: [ENCODER_CACHE_MATCH_INFO],
  create: (params, env) => new MmEmbeddingsCacheProducer(env.name, params),
};
