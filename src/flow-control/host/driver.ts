/**
 * The synchronous host loop shared by the wall-clock gate and the virtual-time fleet host: it feeds
 * the controller fresh saturation, expires TTLs, dispatches, evicts, and bounds overshoot.
 *
 * Overshoot: a dispatched item changes saturation only once the host has scheduled it (the
 * concurrency detector counts it in preRequest, the utilization detector via dispatchedSinceScrape).
 * Until the host reports it `placed` (or completed) it is "unplaced", and at most `maxUnplaced`
 * unplaced items exist at once, so a burst of releases never dispatches a whole queue on one stale
 * saturation reading.
 */
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type { ResponseUsage } from "../../scheduler/framework/types.ts";
import type { FlowControlRuntime } from "../build.ts";
import type { FlowExit, FlowItem, SaturationDetector } from "../types.ts";

/** Construction inputs of a {@link FlowDriver}. */
export interface FlowDriverOptions {
  runtime: FlowControlRuntime;
  /** Current candidate endpoints (saturation input; empty = no endpoints). */
  endpoints(): readonly Endpoint[];
  /** Dispatched items not yet placed or completed, at most (≥ 1; default 1). */
  maxUnplaced?: number;
}

/** What one driver call produced; every exit appears in exactly one list, once. */
export interface FlowStep {
  /** Items to schedule now, in dispatch order. */
  readonly dispatched: readonly FlowExit[];
  /** Items that left without dispatch (rejected, expired, cancelled, shut down). */
  readonly dropped: readonly FlowExit[];
  /** In-flight items to abort with 429 `evicted`. */
  readonly evicted: readonly FlowExit[];
  /** Items wait and saturation gates them: only a saturation change can dispatch them (poll). */
  readonly blocked: boolean;
}

/** Concurrency-detector bookkeeping, when the configured detector has it. */
interface TrackingDetector extends SaturationDetector {
  track(requestId: string, endpointKey: string, tokens: number): void;
  release(requestId: string): void;
}

const NONE: readonly FlowExit[] = Object.freeze([]);

function isTracking(detector: SaturationDetector): detector is TrackingDetector {
  const candidate = detector as Partial<TrackingDetector>;
  return typeof candidate.track === "function" && typeof candidate.release === "function";
}

/** See the module comment. Single-threaded; time (ms) is always passed in. */
export class FlowDriver {
  private readonly maxUnplaced: number;
  private readonly unplaced = new Map<string, FlowItem>();
  private readonly tracker: TrackingDetector | undefined;
  private queued = 0;
  private dispatched: FlowExit[] | undefined;
  private dropped: FlowExit[] | undefined;
  private evicted: FlowExit[] | undefined;

  constructor(private readonly options: FlowDriverOptions) {
    this.maxUnplaced = Math.max(1, options.maxUnplaced ?? 1);
    const detector = options.runtime.detector;
    this.tracker = isTracking(detector) ? detector : undefined;
  }

  /** Queued items right now. */
  get queuedCount(): number {
    return this.queued;
  }

  /** Dispatched items not yet placed or completed. */
  get unplacedCount(): number {
    return this.unplaced.size;
  }

  /** Earliest queue deadline (ms), or undefined: when to call {@link run} to expire TTLs. */
  nextDeadline(): number | undefined {
    return this.options.runtime.controller.nextDeadline();
  }

  /** An item arrives at `now` (its `enqueuedAt`); it may be rejected, or dispatched right away. */
  enqueue(item: FlowItem, now: number): FlowStep {
    // Endpoint presence first: it decides the rejection reason and the TTL of this item.
    this.options.runtime.controller.setHasEndpoints(this.options.endpoints().length > 0);
    const result = this.options.runtime.controller.enqueue(item);
    if (result.outcome === "queued") this.queued += 1;
    else this.drop({ item, outcome: result.outcome, queuedMs: 0 });
    return this.run(now);
  }

  /** The client of a queued item left; undefined-safe for items no longer queued. */
  cancel(id: string, now: number): FlowStep {
    const exit = this.options.runtime.controller.cancel(id, now);
    if (exit) this.leaveQueue(exit);
    return this.run(now);
  }

  /**
   * A dispatched item now counts in saturation (the host scheduled it). With a concurrency
   * detector and `endpointKey`, also counts it there (idempotent with the detector's preRequest).
   */
  placed(id: string, now: number, endpointKey?: string): FlowStep {
    const item = this.unplaced.get(id);
    if (item && endpointKey !== undefined) this.tracker?.track(id, endpointKey, item.inputTokens);
    this.unplaced.delete(id);
    return this.run(now);
  }

  /** A dispatched item's response ended (also after eviction): service accounting and release. */
  completed(id: string, usage: ResponseUsage | undefined, now: number): FlowStep {
    this.unplaced.delete(id);
    this.options.runtime.controller.onCompleted(id, usage, now);
    this.tracker?.release(id);
    return this.run(now);
  }

  /** Graceful shutdown: every queued item is dropped with 503 `rejected-shutting-down`. */
  shutdown(now: number): FlowStep {
    for (const exit of this.options.runtime.controller.shutdown(now)) this.leaveQueue(exit);
    return this.collect(false);
  }

  /**
   * Re-evaluates at `now`: endpoint presence, TTL expiry, dispatch while under the unplaced bound,
   * and eviction while dispatch is gated. Call when saturation may have changed or at a deadline.
   */
  run(now: number): FlowStep {
    const { controller, detector } = this.options.runtime;
    const endpoints = this.options.endpoints();
    controller.setHasEndpoints(endpoints.length > 0);
    for (const exit of controller.tick(now)) this.leaveQueue(exit);
    if (this.queued === 0) return this.collect(false);
    // Nothing can be served by an empty pool, whatever the detector says.
    const saturation = endpoints.length > 0 ? detector.saturation(endpoints, now) : Number.POSITIVE_INFINITY;
    while (this.unplaced.size < this.maxUnplaced) {
      const exit = controller.nextDispatch(now, saturation);
      if (!exit) break;
      this.leaveQueue(exit);
      this.unplaced.set(exit.item.id, exit.item);
    }
    const gated = this.queued > 0 && this.unplaced.size < this.maxUnplaced;
    // Evicting frees nothing while the pool is empty.
    if (gated && endpoints.length > 0) {
      for (
        let exit = controller.evictOne(now, saturation);
        exit;
        exit = controller.evictOne(now, saturation)
      ) {
        this.unplaced.delete(exit.item.id);
        (this.evicted ??= []).push(exit);
      }
    }
    return this.collect(gated);
  }

  private leaveQueue(exit: FlowExit): void {
    this.queued -= 1;
    if (exit.outcome === "dispatched") (this.dispatched ??= []).push(exit);
    else this.drop(exit);
  }

  private drop(exit: FlowExit): void {
    (this.dropped ??= []).push(exit);
  }

  private collect(blocked: boolean): FlowStep {
    const step: FlowStep = {
      dispatched: this.dispatched ?? NONE,
      dropped: this.dropped ?? NONE,
      evicted: this.evicted ?? NONE,
      blocked,
    };
    this.dispatched = this.dropped = this.evicted = undefined;
    return step;
  }
}
