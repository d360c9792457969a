/**
 * `inflight-load-producer`: what this router has dispatched to each endpoint and not yet seen
 * finish (reference §2.5): requests, and uncached prompt tokens (plus, optionally, estimated
 * output tokens). Prompt tokens are released at the first token (or at the end), requests at
 * the end; a prefill endpoint (`llm-d.ai/role: prefill`) releases everything at its first token.
 *
 * Never drifts: each request keeps a ledger of exactly what it added, and the end of the
 * request (any cause, called once or more) releases whatever the ledger still holds.
 */
import { z } from "zod";
import { type Endpoint, ROLE_LABEL } from "../../../endpoints/endpoint.ts";
import { readPrefixMatch, uncachedTokens } from "../../../kv-index/index.ts";
import type { Tokenizer } from "../../../tokenizer/tokenizer.ts";
import {
  attributeKey,
  IN_FLIGHT_LOAD,
  type InFlightLoad,
  PREFIX_CACHE_MATCH_INFO,
} from "../../framework/data-keys.ts";
import type {
  DataProducer,
  PreRequest,
  ResponseHooks,
  SchedulingContext,
  SchedulingResult,
} from "../../framework/types.ts";
import type { PluginDefinition } from "../../../plugin/types.ts";
import { chosenEndpoints } from "../shared/chosen-endpoints.ts";
import { type EndpointLoad, inFlightStateKey } from "../shared/inflight-load.ts";
import { promptTokenCount } from "../shared/prompt-pieces.ts";

const parameters = z
  .strictObject({
    addEstimatedOutputTokens: z.boolean().default(false),
    outputRatio: z.number().positive().default(1.5),
    maxEstimatedOutputTokens: z.int().positive().optional(),
    prefixMatchInfoProducerName: z.string().min(1).default("approx-prefix-cache-producer"),
  })
  .prefault({});

/** Validated parameters of `inflight-load-producer`. */
export type InFlightLoadParams = z.infer<typeof parameters>;

/** What one request added on one endpoint and has not yet released. */
interface LedgerEntry {
  key: string;
  promptTokens: number;
  outputTokens: number;
  holdsRequest: boolean;
  prefillOnly: boolean;
}

/** Producer, PreRequest and ResponseHooks in one: the router's live in-flight accounting. */
export class InFlightLoadProducer implements DataProducer, PreRequest, ResponseHooks {
  readonly type = "inflight-load-producer";
  /** Where the per-request `InFlightLoadSnapshot` is published in `ctx.state`. */
  readonly stateKey: string;
  private readonly ledgerKey: string;
  private readonly prefixKey: string;
  private readonly loads = new Map<string, InFlightLoad>();
  private openLedgers = 0;

  constructor(
    readonly name: string,
    private readonly params: InFlightLoadParams,
    private readonly tokenizer: Tokenizer,
  ) {
    this.stateKey = inFlightStateKey(name);
    this.ledgerKey = `${name}/ledger`;
    this.prefixKey = attributeKey(PREFIX_CACHE_MATCH_INFO, params.prefixMatchInfoProducerName);
  }

  /** Current load of one endpoint (zero if none). */
  load(endpointKey: string): InFlightLoad {
    const load = this.loads.get(endpointKey);
    return load ? { ...load } : { requests: 0, tokens: 0 };
  }

  /** Sum over endpoints, plus requests between preRequest and completion (all 0 when idle). */
  totals(): InFlightLoad & { openRequests: number } {
    let requests = 0;
    let tokens = 0;
    for (const load of this.loads.values()) {
      requests += load.requests;
      tokens += load.tokens;
    }
    return { requests, tokens, openRequests: this.openLedgers };
  }

  produce(ctx: SchedulingContext, endpoints: readonly Endpoint[]): void {
    const snapshot = new Map<string, EndpointLoad>();
    const match = readPrefixMatch(ctx.state, this.prefixKey);
    const promptTokens = promptTokenCount(ctx.request, this.tokenizer);
    for (const e of endpoints) {
      const key = e.metadata.key;
      const load = this.loads.get(key);
      snapshot.set(key, {
        requests: load?.requests ?? 0,
        tokens: load?.tokens ?? 0,
        requestUncachedTokens: uncachedTokens(match, key, promptTokens),
      });
    }
    ctx.state.set(this.stateKey, snapshot);
  }

  preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
    if (ctx.state.has(this.ledgerKey)) return;
    const ledger: LedgerEntry[] = [];
    const match = readPrefixMatch(ctx.state, this.prefixKey);
    const promptTokens = promptTokenCount(ctx.request, this.tokenizer);
    const outputTokens = this.estimatedOutputTokens(ctx, promptTokens);
    for (const endpoint of chosenEndpoints(result)) {
      const key = endpoint.metadata.key;
      const entry: LedgerEntry = {
        key,
        promptTokens: uncachedTokens(match, key, promptTokens),
        outputTokens,
        holdsRequest: true,
        prefillOnly: endpoint.metadata.labels[ROLE_LABEL] === "prefill",
      };
      this.adjust(key, 1, entry.promptTokens + entry.outputTokens);
      ledger.push(entry);
    }
    ctx.state.set(this.ledgerKey, ledger);
    this.openLedgers++;
  }

  onFirstToken(ctx: SchedulingContext): void {
    for (const entry of this.ledgerOf(ctx) ?? []) {
      if (entry.prefillOnly) this.release(entry);
      else {
        this.adjust(entry.key, 0, -entry.promptTokens);
        entry.promptTokens = 0;
      }
    }
  }

  onResponseComplete(ctx: SchedulingContext): void {
    const ledger = this.ledgerOf(ctx);
    if (!ledger) return;
    for (const entry of ledger) this.release(entry);
    ctx.state.delete(this.ledgerKey);
    this.openLedgers--;
  }

  private ledgerOf(ctx: SchedulingContext): LedgerEntry[] | undefined {
    return ctx.state.get(this.ledgerKey) as LedgerEntry[] | undefined;
  }

  private release(entry: LedgerEntry): void {
    this.adjust(entry.key, entry.holdsRequest ? -1 : 0, -(entry.promptTokens + entry.outputTokens));
    entry.promptTokens = 0;
    entry.outputTokens = 0;
    entry.holdsRequest = false;
  }

  private adjust(key: string, requests: number, tokens: number): void {
    const load = this.loads.get(key) ?? { requests: 0, tokens: 0 };
    load.requests += requests;
    load.tokens += tokens;
    if (load.requests === 0 && load.tokens === 0) this.loads.delete(key);
    else this.loads.set(key, load);
  }

  /**
   * With `addEstimatedOutputTokens`: `outputRatio` × prompt tokens, capped by the request's own
   * output limit (`max_tokens`, `max_completion_tokens`, `max_output_tokens`) and by
   * `maxEstimatedOutputTokens`. Released at the end of the request.
   */
  private estimatedOutputTokens(ctx: SchedulingContext, promptTokens: number): number {
    if (!this.params.addEstimatedOutputTokens) return 0;
    const request = ctx.request;
    let estimate = Math.round(this.params.outputRatio * promptTokens);
    for (const field of ["max_tokens", "max_completion_tokens", "max_output_tokens"]) {
      const limit = request.body[field];
      if (typeof limit === "number" && limit > 0) estimate = Math.min(estimate, limit);
    }
    return Math.min(estimate, this.params.maxEstimatedOutputTokens ?? Number.POSITIVE_INFINITY);
  }
}

/** Registry entry for `inflight-load-producer`. */
export const definition: PluginDefinition<InFlightLoadParams> = {
  type: "inflight-load-producer",
  stability: "beta",
  description: "Router-side in-flight requests and uncached prompt tokens per endpoint (InFlightLoad)",
  parameters,
  produces: [IN_FLIGHT_LOAD],
  consumes: [PREFIX_CACHE_MATCH_INFO],
  create: (params, env) => new InFlightLoadProducer(env.name, params, env.tokenizer),
};
