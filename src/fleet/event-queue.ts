/**
 * Min-heap of timed events for the discrete-event simulator. Ties on time pop in insertion order,
 * so a run is a pure function of its inputs (no dependence on heap internals).
 */

/** A scheduled event: `at` in ms of virtual time, `seq` assigned on push. */
export interface TimedEvent {
  at: number;
  seq: number;
}

/** Binary heap ordered by (at, seq). */
export class EventQueue<E extends TimedEvent> {
  private readonly heap: E[] = [];
  private nextSeq = 0;

  get size(): number {
    return this.heap.length;
  }

  /** Adds an event; its `seq` is overwritten with the insertion counter. */
  push(event: E): void {
    event.seq = this.nextSeq++;
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(event, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = event;
  }

  /** Earliest event without removing it. */
  peek(): E | undefined {
    return this.heap[0];
  }

  /** Removes and returns the earliest event. */
  pop(): E | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && before(heap[right]!, heap[left]!) ? right : left;
      if (!before(heap[child]!, last)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}

function before(a: TimedEvent, b: TimedEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}
