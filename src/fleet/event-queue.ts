/**
 * Min-heap of timed events for the discrete-event simulator. Ties on time pop in insertion order,
 * so a run is a pure function of its inputs (no dependence on heap internals).
 */
import { MinHeap } from "../core/min-heap.ts";

/** A scheduled event: `at` in ms of virtual time, `seq` assigned on push. */
export interface TimedEvent {
  at: number;
  seq: number;
}

/** Binary heap ordered by (at, seq). */
export class EventQueue<E extends TimedEvent> {
  private readonly heap = new MinHeap<E>(before);
  private nextSeq = 0;

  get size(): number {
    return this.heap.size;
  }

  /** Adds an event; its `seq` is overwritten with the insertion counter. */
  push(event: E): void {
    event.seq = this.nextSeq++;
    this.heap.push(event);
  }

  /** Earliest event without removing it. */
  peek(): E | undefined {
    return this.heap.peek();
  }

  /** Removes and returns the earliest event. */
  pop(): E | undefined {
    return this.heap.pop();
  }
}

function before(a: TimedEvent, b: TimedEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
