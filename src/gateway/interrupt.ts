/**
 * What a forwarding request listens to for being cut off: the drain's deadline, or a flow-control
 * eviction. Listeners are kept by slot (src/core/slot-list.ts), so one per request costs an
 * array write and lets its request's objects die young.
 */
import { SlotList } from "../core/slot-list.ts";

/** A moment that comes at most once, with its reason; listeners run once when it does. */
export class Interrupt {
  private readonly listeners = new SlotList<() => void>();
  private passedWith: { reason: unknown } | undefined;

  /** True once the moment came. */
  get aborted(): boolean {
    return this.passedWith !== undefined;
  }

  /** Why, once it came (an `LlmdError` for the gateway's own interrupts). */
  get reason(): unknown {
    return this.passedWith?.reason;
  }

  /**
   * Runs `listener` once when the moment comes (never, when it already has: read `aborted`);
   * returns the slot that {@link unwatch} takes.
   */
  watch(listener: () => void): number {
    return this.listeners.add(listener);
  }

  unwatch(slot: number): void {
    this.listeners.remove(slot);
  }

  /** The moment comes: every listener runs once, with `reason` readable. */
  pass(reason: unknown): void {
    if (this.passedWith) return;
    this.passedWith = { reason };
    const listeners = this.listeners.members();
    this.listeners.clear();
    for (const listener of listeners) listener();
  }
}

/**
 * An interrupt that comes when `signal` aborts, with its reason. Each call leaves one listener on
 * `signal`: call it once per signal (the drain's, at startup) or for a signal that lives as long as
 * one request (an eviction, a request's legs), never per request on a long-lived one.
 */
export function interruptOf(signal: AbortSignal): Interrupt {
  const interrupt = new Interrupt();
  if (signal.aborted) interrupt.pass(signal.reason);
  else signal.addEventListener("abort", () => interrupt.pass(signal.reason), { once: true });
  return interrupt;
}
