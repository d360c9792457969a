/**
 * `concurrency-detector`: saturation from the router's own in-flight accounting, not from scraped
 * metrics (so it cannot go stale). It is also a pre-request / response-complete plugin: it counts a
 * request against the endpoint it was dispatched to and releases it on completion, keyed by request
 * id so the count never drifts. Pool saturation: requests mode Σinflight / Σcapacity, tokens mode
 * the same in prompt tokens, hybrid the mean over endpoints of max(request ratio, token ratio).
 */
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type {
  PreRequest,
  ResponseHooks,
  SchedulingContext,
  SchedulingResult,
} from "../../scheduler/framework/types.ts";
import type { SaturationDetector } from "../types.ts";

/** Parameters (llm-d names and defaults). */
export interface ConcurrencyDetectorParams {
  concurrencyMode: "requests" | "tokens" | "hybrid";
  /** Requests per endpoint at saturation 1. */
  maxConcurrency: number;
  /** Prompt tokens per endpoint at saturation 1. */
  maxTokenConcurrency: number;
  /** Per-endpoint filter limit = capacity × (1 + headroom). */
  headroom: number;
}

interface Load {
  requests: number;
  tokens: number;
}

/** The detector plus its in-flight bookkeeping (callable directly by hosts without the scheduler). */
export interface ConcurrencyDetector extends SaturationDetector, PreRequest, ResponseHooks {
  /** Counts request `requestId` (with `tokens` prompt tokens) against `endpointKey`. */
  track(requestId: string, endpointKey: string, tokens: number): void;
  /** Releases what `track` counted for `requestId`; unknown ids are ignored. */
  release(requestId: string): void;
  /** Current in-flight load of `endpointKey`. */
  loadOf(endpointKey: string): Readonly<Load>;
}

const IDLE: Load = Object.freeze({ requests: 0, tokens: 0 });

/** Builds a `concurrency-detector` instance. */
export function concurrencyDetector(
  params: ConcurrencyDetectorParams,
  name = "concurrency-detector",
): ConcurrencyDetector {
  const loads = new Map<string, Load>();
  const requests = new Map<string, { endpointKey: string; tokens: number }>();

  const track = (requestId: string, endpointKey: string, tokens: number): void => {
    if (requests.has(requestId)) return;
    requests.set(requestId, { endpointKey, tokens });
    const load = loads.get(endpointKey) ?? { requests: 0, tokens: 0 };
    load.requests += 1;
    load.tokens += tokens;
    loads.set(endpointKey, load);
  };

  const release = (requestId: string): void => {
    const record = requests.get(requestId);
    if (!record) return;
    requests.delete(requestId);
    const load = loads.get(record.endpointKey);
    if (!load) return;
    load.requests -= 1;
    load.tokens -= record.tokens;
    if (load.requests <= 0) loads.delete(record.endpointKey);
  };

  const loadOf = (endpointKey: string): Load => loads.get(endpointKey) ?? IDLE;

  const ratio = (load: Load): number => {
    const byRequests = load.requests / params.maxConcurrency;
    const byTokens = load.tokens / params.maxTokenConcurrency;
    if (params.concurrencyMode === "requests") return byRequests;
    if (params.concurrencyMode === "tokens") return byTokens;
    return Math.max(byRequests, byTokens);
  };

  const saturation = (endpoints: readonly Endpoint[]): number => {
    if (endpoints.length === 0) return 1;
    let sum = 0;
    if (params.concurrencyMode === "hybrid") {
      for (const endpoint of endpoints) sum += ratio(loadOf(endpoint.metadata.key));
      return sum / endpoints.length;
    }
    for (const endpoint of endpoints) {
      const load = loadOf(endpoint.metadata.key);
      sum += params.concurrencyMode === "requests" ? load.requests : load.tokens;
    }
    const capacity =
      params.concurrencyMode === "requests" ? params.maxConcurrency : params.maxTokenConcurrency;
    return sum / (capacity * endpoints.length);
  };

  return {
    type: "concurrency-detector",
    name,
    kind: "saturation-detector",
    track,
    release,
    loadOf,
    saturation,
    endpointSaturated: (endpoint) => ratio(loadOf(endpoint.metadata.key)) >= 1 + params.headroom,
    preRequest(ctx: SchedulingContext, result: SchedulingResult): void {
      const target = result.profileResults.get(result.primaryProfileName)?.targetEndpoints[0];
      if (!target) return;
      const request = ctx.request;
      track(
        request.requestId,
        target.metadata.key,
        request.tokens?.length ?? Math.ceil(request.promptText.length / 4),
      );
    },
    onResponseComplete(ctx: SchedulingContext): void {
      release(ctx.request.requestId);
    },
  };
}
