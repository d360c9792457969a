/**
 * What the controller reports outward: an optional event observer (the gateway turns it into
 * `llm_d_epp_flow_control_*` metrics) and a stats snapshot. No metrics library in the pure core.
 */
import type { ResponseUsage } from "../scheduler/framework/types.ts";
import type { FlowExit, FlowFinalOutcome, FlowItem } from "./types.ts";

/** Receives every state change; called synchronously, must not call back into the controller. */
export interface FlowObserver {
  /** An item entered a queue. */
  enqueued?(item: FlowItem, now: number): void;
  /** An item left: dispatched, rejected (at enqueue or later), or evicted after dispatch. */
  exited?(exit: FlowExit, now: number): void;
  /** A dispatched item completed (not called for evicted items). */
  completed?(item: FlowItem, usage: ResponseUsage | undefined, now: number): void;
}

/** Queue occupancy of one flow. */
export interface FlowStats {
  fairnessId: string;
  requests: number;
  bytes: number;
}

/** Queue occupancy of one band. */
export interface BandStats {
  priority: number;
  requests: number;
  bytes: number;
  flows: FlowStats[];
}

/** Snapshot of the controller (labels are low-cardinality: priority, fairness id, outcome). */
export interface FlowControlStats {
  /** Queued requests and bytes over all bands. */
  requests: number;
  bytes: number;
  /** Dispatched, not yet completed or evicted. */
  inFlight: number;
  /** Bands, highest priority first. */
  bands: BandStats[];
  /** Last saturation passed to `nextDispatch` / `dispatchable`. */
  saturation: number;
  /** Cumulative count of every final outcome. */
  outcomes: Record<FlowFinalOutcome, number>;
  hasEndpoints: boolean;
  shuttingDown: boolean;
}

/** Zeroed outcome counters. */
export function emptyOutcomeCounts(): Record<FlowFinalOutcome, number> {
  return {
    dispatched: 0,
    "rejected-saturated": 0,
    "rejected-no-endpoints": 0,
    "rejected-ttl-expired": 0,
    "rejected-context-cancelled": 0,
    "rejected-shutting-down": 0,
    evicted: 0,
  };
}
