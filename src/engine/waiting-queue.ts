/**
 * The engine's waiting queue under vLLM's two scheduling policies. `fcfs`: arrival order, preempted
 * sequences go back to the head. `priority`: a binary min-heap on (priority, arrival), so a preempted
 * sequence keeps its original place. Aborted entries stay in the queue and are skipped by the caller.
 */
import { MinHeap } from "../core/min-heap.ts";
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
  private readonly heap = new MinHeap<Sequence>(servedBefore);

  get length(): number {
    return this.heap.size;
  }

  push(s: Sequence): void {
    this.heap.push(s);
  }

  requeue(s: Sequence): void {
    this.heap.push(s);
  }

  peek(): Sequence | undefined {
    return this.heap.peek();
  }

  shift(): Sequence | undefined {
    return this.heap.pop();
  }

  /** Heap order (allocates; for stats). */
  [Symbol.iterator](): Iterator<Sequence> {
    return this.heap[Symbol.iterator]();
  }
}
