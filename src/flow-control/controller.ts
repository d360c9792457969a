/**
 * llm-d's flow-control layer as a pure state machine: queues keyed by (fairnessId, priority),
 * strict-priority bands (tier 1), a fairness policy per band (tier 2), an ordering policy per flow
 * (tier 3), capacity limits, TTLs, saturation-gated work-conserving dispatch and optional eviction.
 * No timers and no I/O: the host passes `now` (ms), asks `nextDeadline()` when to call `tick`, and
 * calls `nextDispatch(now, saturation)` whenever capacity may have freed up.
 */
import type { ResponseUsage } from "../scheduler/framework/types.ts";
import { Band, type QueueEntry } from "./band.ts";
import { bandSettingsFor, type FlowControlConfig } from "./config.ts";
import { pickEvictionVictim } from "./eviction.ts";
import { IndexedHeap } from "./heap.ts";
import { emptyOutcomeCounts, type FlowControlStats, type FlowObserver } from "./observer.ts";
import type {
  BandSelectionPolicy,
  CeilingQuery,
  EnqueueResult,
  EvictionFilter,
  EvictionOrderPolicy,
  FairnessPolicy,
  FlowExit,
  FlowFinalOutcome,
  FlowItem,
  FlowRejection,
  InFlightItem,
  OrderingPolicy,
  UsageLimitPolicy,
} from "./types.ts";

/** Resolved policy instances the controller uses. */
export interface FlowPolicies {
  /** Fairness policy instance for a `fairnessPolicyRef`. */
  fairness(ref: string): FairnessPolicy;
  /** Ordering policy instance for an `orderingPolicyRef`. */
  ordering(ref: string): OrderingPolicy;
  usageLimit: UsageLimitPolicy;
  /** Absent: highest priority first. */
  bandSelection?: BandSelectionPolicy;
  evictionFilter: EvictionFilter;
  evictionOrder: EvictionOrderPolicy;
}

/** Construction inputs of a `FlowController`. */
export interface FlowControllerOptions {
  config: FlowControlConfig;
  policies: FlowPolicies;
  observer?: FlowObserver;
}

interface InFlightRecord extends InFlightItem {
  readonly band: Band;
}

const QUEUED: EnqueueResult = Object.freeze({ outcome: "queued" });
const NO_EXITS: readonly FlowExit[] = Object.freeze([]);

/** The flow controller; single-threaded, all methods synchronous. */
export class FlowController {
  private readonly bands = new Map<number, Band>();
  /** Bands by priority, highest first (ceiling rank order). */
  private byPriority: Band[] = [];
  /** Bands in dispatch try order (band-selection policy). */
  private tryOrder: Band[] = [];
  private readonly entries = new Map<string, QueueEntry>();
  private readonly deadlines = new IndexedHeap<QueueEntry>((a, b) => a.deadline < b.deadline);
  private readonly inFlight = new Map<string, InFlightRecord>();
  private readonly outcomes = emptyOutcomeCounts();
  private readonly query: CeilingQuery = {
    priority: 0,
    rank: 0,
    bandCount: 1,
    maxPriority: 0,
    minPriority: 0,
    saturation: 0,
    attempt: 0,
  };
  private seq = 0;
  private requests = 0;
  private bytes = 0;
  private hasEndpoints = true;
  private shuttingDown = false;
  private lastSaturation = 0;
  private evictionsSinceDispatch = 0;

  constructor(private readonly options: FlowControllerOptions) {
    for (const band of options.config.priorityBands) this.bandFor(band.priority);
  }

  /** Queues `item`, or rejects it (capacity → `rejected-saturated` / `rejected-no-endpoints`). */
  enqueue(item: FlowItem): EnqueueResult {
    if (this.entries.has(item.id) || this.inFlight.has(item.id)) {
      throw new Error(`flow item id ${item.id} is already queued or in flight`);
    }
    const band = this.bandFor(item.priority);
    const rejection = this.admissionRejection(band, item.bytes);
    if (rejection) {
      this.finish(item, rejection, item.enqueuedAt);
      return { outcome: rejection };
    }
    const settingsTtl =
      item.ttlMs ?? band.settings.defaultRequestTTL ?? this.options.config.defaultRequestTTL;
    const entry = band.add(item, this.seq++, settingsTtl > 0 ? settingsTtl : Number.POSITIVE_INFINITY);
    this.entries.set(item.id, entry);
    this.requests += 1;
    this.bytes += item.bytes;
    this.scheduleDeadline(entry);
    this.options.observer?.enqueued?.(item, item.enqueuedAt);
    return QUEUED;
  }

  /** The client of a queued item left: 503 `rejected-context-cancelled`. Undefined if not queued. */
  cancel(id: string, now: number): FlowExit | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.removeEntry(entry);
    return this.finish(entry.item, "rejected-context-cancelled", now);
  }

  /** Expires items whose queue-wait budget ran out by `now` (429 TTL, or 503 while the pool is empty). */
  tick(now: number): readonly FlowExit[] {
    let exits: FlowExit[] | undefined;
    for (let top = this.deadlines.peek(); top && top.value.deadline <= now; top = this.deadlines.peek()) {
      this.removeEntry(top.value);
      const outcome = this.hasEndpoints ? "rejected-ttl-expired" : "rejected-no-endpoints";
      (exits ??= []).push(this.finish(top.value.item, outcome, now));
    }
    return exits ?? NO_EXITS;
  }

  /** Earliest queue deadline (ms), or undefined when nothing can expire: when to call `tick`. */
  nextDeadline(): number | undefined {
    return this.deadlines.peek()?.value.deadline;
  }

  /** Tells whether the pool has endpoints; switches every deadline to the matching TTL. */
  setHasEndpoints(hasEndpoints: boolean): void {
    if (hasEndpoints === this.hasEndpoints) return;
    this.hasEndpoints = hasEndpoints;
    this.deadlines.clear();
    for (const entry of this.entries.values()) this.scheduleDeadline(entry);
  }

  /** Whether `nextDispatch` with this saturation would dispatch something. */
  dispatchable(saturation: number): boolean {
    this.lastSaturation = saturation;
    return this.openBand(saturation) !== undefined;
  }

  /**
   * Dispatches the next item: first open band in try order (queued and saturation below its
   * ceiling), its fairness policy's flow, that flow's head. Undefined when every band is empty or gated.
   */
  nextDispatch(now: number, saturation: number): FlowExit | undefined {
    this.lastSaturation = saturation;
    const band = this.openBand(saturation);
    this.query.attempt += 1;
    if (!band) return undefined;
    const picked = band.fairness.pickFlow(band, now) ?? band.activeFlows[0];
    const entry = (picked as (typeof band.activeFlows)[number]).headEntry()!;
    this.removeEntry(entry);
    band.fairness.onDispatched?.(band, entry.item, now);
    band.ordering.onDispatched?.(entry.item, now);
    this.inFlight.set(entry.item.id, { item: entry.item, dispatchedAt: now, band });
    this.evictionsSinceDispatch = 0;
    return this.finish(entry.item, "dispatched", now);
  }

  /**
   * With eviction enabled and dispatch blocked, evicts one in-flight item below the highest waiting
   * band (429 `evicted`); at most one victim per waiting higher item between dispatches.
   */
  evictOne(now: number, saturation: number): FlowExit | undefined {
    if (!this.options.config.enableEviction || this.inFlight.size === 0) return undefined;
    if (this.openBand(saturation)) return undefined;
    const waiting = this.tryOrder.find((band) => band.requests > 0);
    if (!waiting || this.evictionsSinceDispatch >= waiting.requests) return undefined;
    const { evictionFilter, evictionOrder } = this.options.policies;
    const victim = pickEvictionVictim(
      this.inFlight.values(),
      waiting.priority,
      evictionFilter,
      evictionOrder,
    );
    if (!victim) return undefined;
    this.inFlight.delete(victim.item.id);
    this.evictionsSinceDispatch += 1;
    return this.finish(victim.item, "evicted", now);
  }

  /** A dispatched item finished (feeds service accounting). False if unknown or already evicted. */
  onCompleted(id: string, usage: ResponseUsage | undefined, now: number): boolean {
    const record = this.inFlight.get(id);
    if (!record) return false;
    this.inFlight.delete(id);
    record.band.fairness.onCompleted?.(record.item, usage, now);
    this.options.observer?.completed?.(record.item, usage, now);
    return true;
  }

  /** Graceful shutdown: answers every queued item with 503 `rejected-shutting-down`, refuses new ones. */
  shutdown(now: number): readonly FlowExit[] {
    this.shuttingDown = true;
    const exits: FlowExit[] = [];
    for (const entry of [...this.entries.values()]) {
      this.removeEntry(entry);
      exits.push(this.finish(entry.item, "rejected-shutting-down", now));
    }
    return exits;
  }

  /** Whether `id` is waiting in a queue. */
  isQueued(id: string): boolean {
    return this.entries.has(id);
  }

  /** Snapshot for metrics and diagnostics (allocates; call on scrape, not per request). */
  stats(): FlowControlStats {
    return {
      requests: this.requests,
      bytes: this.bytes,
      inFlight: this.inFlight.size,
      bands: this.byPriority.map((band) => ({
        priority: band.priority,
        requests: band.requests,
        bytes: band.bytes,
        flows: band.activeFlows.map((flow) => ({
          fairnessId: flow.fairnessId,
          requests: flow.length,
          bytes: flow.bytes,
        })),
      })),
      saturation: this.lastSaturation,
      outcomes: { ...this.outcomes },
      hasEndpoints: this.hasEndpoints,
      shuttingDown: this.shuttingDown,
    };
  }

  private admissionRejection(band: Band, bytes: number): FlowRejection | undefined {
    if (this.shuttingDown) return "rejected-shutting-down";
    const { maxRequests, maxBytes } = this.options.config;
    const globalFull =
      (maxRequests > 0 && this.requests + 1 > maxRequests) || (maxBytes > 0 && this.bytes + bytes > maxBytes);
    if (!globalFull && band.fits(bytes)) return undefined;
    return this.hasEndpoints ? "rejected-saturated" : "rejected-no-endpoints";
  }

  private openBand(saturation: number): Band | undefined {
    const query = this.query;
    query.saturation = saturation;
    query.bandCount = this.byPriority.length;
    query.maxPriority = this.byPriority[0]?.priority ?? 0;
    query.minPriority = this.byPriority[this.byPriority.length - 1]?.priority ?? 0;
    for (const band of this.tryOrder) {
      if (band.requests === 0) continue;
      query.priority = band.priority;
      query.rank = this.byPriority.indexOf(band);
      if (saturation < this.options.policies.usageLimit.ceiling(query)) return band;
    }
    return undefined;
  }

  private bandFor(priority: number): Band {
    let band = this.bands.get(priority);
    if (band) return band;
    const settings = bandSettingsFor(this.options.config, priority);
    const { policies } = this.options;
    band = new Band(
      priority,
      settings,
      policies.fairness(settings.fairnessPolicyRef),
      policies.ordering(settings.orderingPolicyRef),
    );
    this.bands.set(priority, band);
    this.byPriority = [...this.bands.values()].sort((a, b) => b.priority - a.priority);
    const order = policies.bandSelection?.order(this.byPriority.map((b) => b.priority));
    // Bands a selection policy leaves out are still tried, last, so no queued item is stranded.
    const chosen = (order ?? []).map((p) => this.bands.get(p)).filter((b): b is Band => b !== undefined);
    this.tryOrder = [...new Set([...chosen, ...this.byPriority])];
    return band;
  }

  private scheduleDeadline(entry: QueueEntry): void {
    const noEndpointTtl = this.options.config.noEndpointRequestTTL || Number.POSITIVE_INFINITY;
    entry.deadline = entry.item.enqueuedAt + (this.hasEndpoints ? entry.ttlMs : noEndpointTtl);
    if (Number.isFinite(entry.deadline)) this.deadlines.push(entry.deadlineNode);
  }

  private removeEntry(entry: QueueEntry): void {
    this.bands.get(entry.item.priority)!.remove(entry);
    this.deadlines.remove(entry.deadlineNode);
    this.entries.delete(entry.item.id);
    this.requests -= 1;
    this.bytes -= entry.item.bytes;
  }

  private finish(item: FlowItem, outcome: FlowFinalOutcome, now: number): FlowExit {
    const exit: FlowExit = { item, outcome, queuedMs: Math.max(0, now - item.enqueuedAt) };
    this.outcomes[outcome] += 1;
    this.options.observer?.exited?.(exit, now);
    return exit;
  }
}
