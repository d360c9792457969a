/**
 * The gateway's wall-clock host around flow control: `admit` resolves when a request may be
 * scheduled, or with the outcome error that answers it. One timer tracks the earliest TTL
 * deadline; a poll timer runs only while requests wait on saturation. Dispatch is re-evaluated
 * after every arrival, placement and release, on endpoint-pool changes and on `wake()`.
 */
import { LlmdError } from "../../api/errors.ts";
import { type Clock, wallClock } from "../../core/clock.ts";
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type { ResponseUsage } from "../../scheduler/framework/types.ts";
import type { FlowControlRuntime } from "../build.ts";
import { flowOutcomeError } from "../outcome-errors.ts";
import type { FlowExit, FlowItem } from "../types.ts";
import { FlowDriver, type FlowStep } from "./driver.ts";

/** The endpoint pool as the gate reads it (`EndpointPool` fits). */
export interface GatePool {
  /** Ready endpoints: saturation input; empty = no endpoints (switches TTLs and reasons). */
  candidates(): readonly Endpoint[];
  /** Subscribes to membership / health changes. */
  on?(event: "change", fn: () => void): void;
}

/** Construction inputs of a {@link FlowGate}. */
export interface FlowGateOptions {
  runtime: FlowControlRuntime;
  pool: GatePool;
  /** Default wall clock (ms). */
  clock?: Clock;
  /** While requests wait on saturation, re-read it this often (ms, ≥ 1; default 20). */
  pollIntervalMs?: number;
  /** Dispatched requests not yet `placed`, at most (default 1; see driver.ts on overshoot). */
  maxUnplaced?: number;
  /** Told how long each dispatch evaluation took (seconds), for `dispatch_cycle_duration_seconds`. */
  onDispatchCycle?(seconds: number): void;
}

/** A dispatched request's lease. Call `release` exactly once when its response ends. */
export interface Admission {
  /** Time spent queued (ms). */
  readonly queuedMs: number;
  /**
   * The request was scheduled (its load is visible to the saturation detector); lets the next one
   * dispatch. `endpointKey` also counts it in a concurrency detector. Optional before `release`.
   */
  placed(endpointKey?: string): void;
  /** The response ended (any cause, also after eviction). Idempotent. */
  release(usage?: ResponseUsage): void;
}

/** Called when flow control evicts the admitted request: abort it and answer with `error` (429). */
export type EvictHandler = (error: LlmdError) => void;

const duplicateId = (id: string) =>
  new LlmdError("duplicate_request_id", `request id ${JSON.stringify(id)} is already queued or in flight`, {
    param: "x-request-id",
  });

interface Waiter {
  resolve(result: Admission | LlmdError): void;
  signal: AbortSignal;
  onAbort(): void;
  onEvict: EvictHandler | undefined;
}

/** See the module comment. */
export class FlowGate {
  private readonly driver: FlowDriver;
  private readonly clock: Clock;
  private readonly pollIntervalMs: number;
  private readonly waiters = new Map<string, Waiter>();
  /** Dispatched, not yet released: id → eviction handler (cleared once evicted). */
  private readonly leases = new Map<string, EvictHandler | undefined>();
  private deadlineTimer: NodeJS.Timeout | undefined;
  private deadlineAt: number | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: FlowGateOptions) {
    this.clock = options.clock ?? wallClock;
    this.pollIntervalMs = Math.max(1, options.pollIntervalMs ?? 20);
    this.driver = new FlowDriver({
      runtime: options.runtime,
      endpoints: () => options.pool.candidates(),
      maxUnplaced: options.maxUnplaced,
    });
    options.pool.on?.("change", () => this.wake());
  }

  /** Requests waiting in queues. */
  get queued(): number {
    return this.driver.queuedCount;
  }

  /**
   * Queues `item` (id = the scheduler's request id; `enqueuedAt` is overwritten with now) until it
   * dispatches → an {@link Admission}, or it is dropped → the outcome error (429/503 with reason).
   * Aborting `signal` while queued drops it with 503 `rejected-context-cancelled`.
   */
  admit(item: FlowItem, signal: AbortSignal, onEvict?: EvictHandler): Promise<Admission | LlmdError> {
    if (signal.aborted) return Promise.resolve(flowOutcomeError("rejected-context-cancelled")!);
    if (this.waiters.has(item.id) || this.leases.has(item.id)) return Promise.resolve(duplicateId(item.id));
    const now = this.clock.now();
    return new Promise((resolve) => {
      const onAbort = () => this.apply(this.driver.cancel(item.id, this.clock.now()));
      this.waiters.set(item.id, { resolve, signal, onAbort, onEvict });
      signal.addEventListener("abort", onAbort, { once: true });
      this.apply(this.driver.enqueue({ ...item, enqueuedAt: now }, now));
    });
  }

  /** Saturation may have changed (a scrape landed): re-evaluate dispatch now. */
  wake(): void {
    if (!this.closed) this.evaluate();
  }

  /** Drops every queued request with 503 `rejected-shutting-down`; later arrivals get the same. */
  shutdown(): void {
    this.closed = true;
    this.clearTimers();
    this.apply(this.driver.shutdown(this.clock.now()));
  }

  private evaluate(): void {
    const started = performance.now();
    const step = this.driver.run(this.clock.now());
    this.options.onDispatchCycle?.((performance.now() - started) / 1000);
    this.apply(step);
  }

  private apply(step: FlowStep): void {
    for (const exit of step.dropped) this.settle(exit, flowOutcomeError(exit.outcome)!);
    for (const exit of step.dispatched) this.settle(exit, this.admission(exit));
    for (const exit of step.evicted) this.evict(exit);
    if (this.closed) return;
    this.armDeadline();
    this.armPoll(step.blocked);
  }

  private settle(exit: FlowExit, result: Admission | LlmdError): void {
    const waiter = this.waiters.get(exit.item.id);
    if (!waiter) return;
    this.waiters.delete(exit.item.id);
    waiter.signal.removeEventListener("abort", waiter.onAbort);
    if (exit.outcome === "dispatched") this.leases.set(exit.item.id, waiter.onEvict);
    waiter.resolve(result);
  }

  private admission(exit: FlowExit): Admission {
    const id = exit.item.id;
    let released = false;
    return {
      queuedMs: exit.queuedMs,
      placed: (endpointKey) => {
        if (!released) this.apply(this.driver.placed(id, this.clock.now(), endpointKey));
      },
      release: (usage) => {
        if (released) return;
        released = true;
        this.leases.delete(id);
        this.apply(this.driver.completed(id, usage, this.clock.now()));
      },
    };
  }

  private evict(exit: FlowExit): void {
    const handler = this.leases.get(exit.item.id);
    this.leases.set(exit.item.id, undefined);
    handler?.(flowOutcomeError(exit.outcome)!);
  }

  private armDeadline(): void {
    const next = this.driver.nextDeadline();
    if (next === this.deadlineAt) return;
    clearTimeout(this.deadlineTimer);
    this.deadlineAt = next;
    if (next === undefined) return;
    // Timers may fire a little before the clock reaches `next`; `evaluate` then re-arms.
    const delay = Math.max(1, Math.ceil(next - this.clock.now()));
    this.deadlineTimer = setTimeout(() => {
      this.deadlineAt = undefined;
      this.evaluate();
    }, delay);
  }

  private armPoll(blocked: boolean): void {
    if (!blocked) {
      clearTimeout(this.pollTimer);
      this.pollTimer = undefined;
      return;
    }
    this.pollTimer ??= setTimeout(() => {
      this.pollTimer = undefined;
      this.evaluate();
    }, this.pollIntervalMs);
  }

  private clearTimers(): void {
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.pollTimer);
    this.deadlineTimer = this.pollTimer = this.deadlineAt = undefined;
  }
}
