/**
 * Flow control for a discrete-event host (the fleet simulator): no timers and no promises. Each
 * call takes the event's virtual time and answers what to dispatch, drop and evict now, plus the
 * next time the host must call {@link VirtualFlowHost.wake} (a TTL deadline, or a poll while items
 * wait on saturation). The host schedules each dispatched item and then reports it `placed`, which
 * may dispatch the next one: that keeps dispatch from overshooting on one stale saturation reading.
 */
import type { Endpoint } from "../../endpoints/endpoint.ts";
import type { ResponseUsage } from "../../scheduler/framework/types.ts";
import type { FlowControlRuntime } from "../build.ts";
import type { FlowItem } from "../types.ts";
import { FlowDriver, type FlowStep } from "./driver.ts";

/** Construction inputs of a {@link VirtualFlowHost}. */
export interface VirtualFlowHostOptions {
  runtime: FlowControlRuntime;
  /** The endpoints the scheduler sees (saturation input). */
  endpoints(): readonly Endpoint[];
  /**
   * While items wait on saturation, wake this often (ms) to re-read it; 0 = only on events
   * (`saturationChanged`, `completed`, `placed`). Default 0: the fleet reports scrapes itself.
   */
  pollIntervalMs?: number;
  /** Dispatched items not yet placed, at most (default 1). */
  maxUnplaced?: number;
}

/** One answer: what to do now, and when to call `wake` next (ms; undefined = no wake needed). */
export interface VirtualFlowStep extends FlowStep {
  readonly wakeAt: number | undefined;
}

/** See the module comment. Times are virtual clock ms and must not go backwards. */
export class VirtualFlowHost {
  private readonly driver: FlowDriver;
  private readonly pollIntervalMs: number;

  constructor(options: VirtualFlowHostOptions) {
    this.driver = new FlowDriver(options);
    this.pollIntervalMs = options.pollIntervalMs ?? 0;
  }

  /** Queued items right now. */
  get queued(): number {
    return this.driver.queuedCount;
  }

  /** A request arrives at `at` (item.enqueuedAt should equal `at`). */
  enqueue(item: FlowItem, at: number): VirtualFlowStep {
    return this.withWake(this.driver.enqueue(item, at), at);
  }

  /** The scheduler placed dispatched item `id` on `endpointKey` (its load is now visible). */
  placed(id: string, at: number, endpointKey?: string): VirtualFlowStep {
    return this.withWake(this.driver.placed(id, at, endpointKey), at);
  }

  /** A dispatched request finished (or was aborted after eviction) at `at`. */
  completed(id: string, usage: ResponseUsage | undefined, at: number): VirtualFlowStep {
    return this.withWake(this.driver.completed(id, usage, at), at);
  }

  /** Endpoint metrics or membership changed at `at` (a scrape landed, a replica came or went). */
  saturationChanged(at: number): VirtualFlowStep {
    return this.wake(at);
  }

  /** The wake-up time returned earlier has come (or any time): expire, dispatch, evict. */
  wake(at: number): VirtualFlowStep {
    return this.withWake(this.driver.run(at), at);
  }

  /** A queued request's client gave up at `at`. */
  cancel(id: string, at: number): VirtualFlowStep {
    return this.withWake(this.driver.cancel(id, at), at);
  }

  /** End of run: drops everything queued with `rejected-shutting-down`. */
  shutdown(at: number): VirtualFlowStep {
    return { ...this.driver.shutdown(at), wakeAt: undefined };
  }

  private withWake(step: FlowStep, at: number): VirtualFlowStep {
    const deadline = this.driver.nextDeadline();
    const poll = step.blocked && this.pollIntervalMs > 0 ? at + this.pollIntervalMs : undefined;
    const wakeAt = deadline === undefined ? poll : poll === undefined ? deadline : Math.min(deadline, poll);
    return { ...step, wakeAt };
  }
}
