/**
 * Contracts of the flow-control layer: the queued item, outcome values, the read-only views policies
 * see, and the policy plugin interfaces (fairness, ordering, saturation, usage limits, eviction).
 * Everything is synchronous and clock-injected: time is always passed in as `now` (ms).
 */
import type { Endpoint } from "../endpoints/endpoint.ts";
import type { ResponseUsage } from "../scheduler/framework/types.ts";
import type { Plugin } from "../plugin/types.ts";

/** One request waiting for dispatch. The controller never mutates it. */
export interface FlowItem {
  /** Unique request id (`x-request-id`). */
  readonly id: string;
  /** Flow/tenant id; flows are keyed by (fairnessId, priority). */
  readonly fairnessId: string;
  /** InferenceObjective priority (higher first; negative = sheddable). */
  readonly priority: number;
  /** Request size in bytes (counted against band and global byte limits). */
  readonly bytes: number;
  /** Clock time (ms) the request arrived. */
  readonly enqueuedAt: number;
  /** Queue-wait budget override in ms; 0 = wait until cancelled; undefined = band/global default. */
  readonly ttlMs?: number;
  /** `x-llm-d-slo-ttft-ms`, for SLO-deadline ordering. */
  readonly sloTtftMs?: number;
  /** Estimated prompt tokens (service accounting). */
  readonly inputTokens: number;
  /** Agent session id, for turn-priority ordering. */
  readonly sessionId?: string;
  /** Turns this session already completed, when the host knows it (else the policy counts). */
  readonly turn?: number;
}

/** Why a queued item left the queue without being dispatched (llm-d's dropped-reason values). */
export type FlowRejection =
  | "rejected-saturated"
  | "rejected-no-endpoints"
  | "rejected-ttl-expired"
  | "rejected-context-cancelled"
  | "rejected-shutting-down";

/** Every way an item ends: dispatched, rejected, or (after dispatch) evicted. */
export type FlowFinalOutcome = "dispatched" | FlowRejection | "evicted";

/** Result of `enqueue`: queued, or rejected right away. */
export type EnqueueResult = { readonly outcome: "queued" } | { readonly outcome: FlowRejection };

/** An item leaving the controller, with how long it waited (ms). */
export interface FlowExit {
  readonly item: FlowItem;
  readonly outcome: FlowFinalOutcome;
  readonly queuedMs: number;
}

/** Read-only view of one flow's queue, as fairness policies see it. */
export interface FlowView {
  readonly fairnessId: string;
  readonly priority: number;
  /** Queued requests (> 0 for flows offered to a fairness policy). */
  readonly length: number;
  readonly bytes: number;
  /** The next item by the band's ordering policy. */
  head(): FlowItem | undefined;
}

/** Read-only view of a priority band, as fairness policies see it. */
export interface BandView {
  readonly priority: number;
  /** Flows with at least one queued item, sorted by fairness id (stable order). */
  readonly activeFlows: readonly FlowView[];
  /** Compares two flows' heads with the band's ordering policy (true when `a`'s head goes first). */
  headBefore(a: FlowView, b: FlowView): boolean;
  /** Slot for per-band policy state, owned by the band's fairness policy. */
  fairnessState: unknown;
}

/** Tier 2: picks which flow of a band dispatches next. Must not mutate the band. */
export interface FairnessPolicy extends Plugin {
  readonly kind: "fairness";
  /** The flow to dispatch from (one of `band.activeFlows`), or undefined when none. */
  pickFlow(band: BandView, now: number): FlowView | undefined;
  /** An item of `band` was dispatched (advance cursors, account service). */
  onDispatched?(band: BandView, item: FlowItem, now: number): void;
  /** A dispatched item completed with `usage` (service accounting). */
  onCompleted?(item: FlowItem, usage: ResponseUsage | undefined, now: number): void;
}

/**
 * Tier 3: orders items inside a flow. `sortKey` is computed once at enqueue (smaller goes first;
 * ties fall back to enqueue time, then arrival order), so queues stay exact heaps.
 */
export interface OrderingPolicy extends Plugin {
  readonly kind: "ordering";
  /** Sort key in ms-like units; `ttlMs` is the item's effective TTL (Infinity when none). */
  sortKey(item: FlowItem, ttlMs: number): number;
  /** An item was dispatched (e.g. count a session's turns). */
  onDispatched?(item: FlowItem, now: number): void;
}

/** Pool saturation from endpoint metrics: 0 idle, ≥ 1 saturated. */
export interface SaturationDetector extends Plugin {
  readonly kind: "saturation-detector";
  /** Pool saturation in [0, ∞); an empty pool is 1 (nothing can be served). */
  saturation(endpoints: readonly Endpoint[], now: number): number;
  /** Whether one endpoint is past its limit (with headroom), for a saturation filter. */
  endpointSaturated(endpoint: Endpoint, now: number): boolean;
  /** How many of `endpoints` it reads as stale (fail closed); absent for detectors without metrics. */
  staleEndpoints?(endpoints: readonly Endpoint[], now: number): number;
}

/** Inputs of one ceiling computation. */
export interface CeilingQuery {
  /** Band priority. */
  priority: number;
  /** 0 = highest-priority band among the active bands. */
  rank: number;
  /** Number of active bands (≥ 1). */
  bandCount: number;
  /** Highest and lowest priority among active bands. */
  maxPriority: number;
  minPriority: number;
  /** Current pool saturation. */
  saturation: number;
  /** Dispatch attempt counter (monotonic), for policies that open gated bands periodically. */
  attempt: number;
}

/** Per-band dispatch ceilings: a band may dispatch while saturation < its ceiling. */
export interface UsageLimitPolicy extends Plugin {
  readonly kind: "usage-limit";
  /** Ceiling in [0, ∞) for one band; Infinity opens the band regardless of saturation. */
  ceiling(query: Readonly<CeilingQuery>): number;
}

/** Tier 1 override: the order bands are tried in (default highest priority first). */
export interface BandSelectionPolicy extends Plugin {
  readonly kind: "band-selection";
  /** Priorities in try order, given `priorities` sorted highest first. */
  order(priorities: readonly number[]): readonly number[];
}

/** An in-flight (dispatched, not completed) item, as eviction sees it. */
export interface InFlightItem {
  readonly item: FlowItem;
  /** Clock time (ms) it was dispatched. */
  readonly dispatchedAt: number;
}

/** Which in-flight items may be evicted. */
export interface EvictionFilter extends Plugin {
  readonly kind: "eviction-filter";
  evictable(candidate: InFlightItem): boolean;
}

/** Order of eviction victims. */
export interface EvictionOrderPolicy extends Plugin {
  readonly kind: "eviction-order";
  /** True when `a` should be evicted before `b`. */
  before(a: InFlightItem, b: InFlightItem): boolean;
}
