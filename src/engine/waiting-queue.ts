/**
 * The engine's waiting queue under vLLM's two scheduling policies. `fcfs`: arrival order, preempted
 * sequences go back to the head. `priority`: a binary min-heap on (priority, arrival), so a preempted
 * sequence keeps its original place. Aborted entries stay in the queue and are skipped by the caller.
 */
import { Deque } from "./deque.ts";
import type { Sequence } from "./sequence.ts";

/** vLLM's `--scheduling-policy`. */
export type SchedulingPolicy = "fcfs" | "priority";

/** Ordered waiting sequences. */
export interface WaitingQueue extends Iterable<Sequence> {
  readonly length: number;
  /** Adds a newly arrived sequence. */
  push(s: Sequence): void;
  /** Returns a preempted sequence to the queue. */
  requeue(s: Sequence): void;
  /** Next sequence to admit, or undefined when empty. */
  peek(): Sequence | undefined;
  /** Removes and returns the next sequence. */
  shift(): Sequence | undefined;
}

/** A queue for `policy`. */
export function createWaitingQueue(policy: SchedulingPolicy): WaitingQueue {
  return policy === "priority" ? new PriorityWaitingQueue() : new FcfsWaitingQueue();
}

/** True when `a` is served before `b` under the priority policy: lower priority value, then earlier arrival. */
export function servedBefore(a: Sequence, b: Sequence): boolean {
  return a.priority !== b.priority ? a.priority < b.priority : a.arrival < b.arrival;
}

class FcfsWaitingQueue extends Deque<Sequence> implements WaitingQueue {
  requeue(s: Sequence): void {
    this.unshift(s);
  }
}

class PriorityWaitingQueue implements WaitingQueue {
  private readonly heap: Sequence[] = [];

  get length(): number {
    return this.heap.length;
  }

  push(s: Sequence): void {
    const heap = this.heap;
    let i = heap.length;
    heap.push(s);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!servedBefore(s, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = s;
  }

  requeue(s: Sequence): void {
    this.push(s);
  }

  peek(): Sequence | undefined {
    return this.heap[0];
  }

  shift(): Sequence | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last) this.siftDown(last);
    return top;
  }

  /** Heap order (allocates; for stats). */
  [Symbol.iterator](): Iterator<Sequence> {
    return this.heap[Symbol.iterator]();
  }

  private siftDown(s: Sequence): void {
    const heap = this.heap;
    const n = heap.length;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && servedBefore(heap[child + 1]!, heap[child]!)) child++;
      if (!servedBefore(heap[child]!, s)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = s;
  }
}
