/**
 * Continuous batching as vLLM v1 schedules it: one token budget per step; running sequences first
 * (decodes, then continuing chunked prefills), then waiting ones in queue order (FCFS, or by
 * (priority, arrival)) while seats (maxNumSeqs) and budget last. With a long-prefill threshold no
 * sequence takes more than that many tokens of a step. When blocks run out, a running
 * sequence is preempted by recompute: the newest one (FCFS) or the lowest-priority, newest one
 * (priority); its blocks are freed and it goes back to the queue.
 */
import type { KvManager } from "./kv-manager.ts";
import type { ResolvedEngineOptions } from "./options.ts";
import type { Sequence } from "./sequence.ts";
import type { StepShape } from "./step-shape.ts";
import { createWaitingQueue, servedBefore, type WaitingQueue } from "./waiting-queue.ts";

/** Owns the running list and the waiting queue; fills `scheduled` each step. */
export class BatchScheduler {
  /** Admission order; under FCFS the last one is the first preemption victim. */
  readonly running: Sequence[] = [];
  readonly waiting: WaitingQueue;
  /** Live (not aborted) sequences in `waiting`. */
  waitingCount = 0;
  /** Sequences scheduled by the last `schedule` call, reused between steps. */
  readonly scheduled: Sequence[] = [];
  preemptions = 0;
  private budget = 0;
  private arrivals = 0;
  private readonly maxNumSeqs: number;
  private readonly maxNumBatchedTokens: number;
  /** Most tokens one sequence takes in a step (longPrefillTokenThreshold; no cap = Infinity). */
  private readonly chunkCap: number;
  private readonly byPriority: boolean;

  constructor(
    private readonly kv: KvManager,
    options: Pick<
      ResolvedEngineOptions,
      "maxNumSeqs" | "maxNumBatchedTokens" | "longPrefillTokenThreshold" | "schedulingPolicy"
    >,
  ) {
    this.maxNumSeqs = options.maxNumSeqs;
    this.maxNumBatchedTokens = options.maxNumBatchedTokens;
    this.chunkCap = options.longPrefillTokenThreshold > 0 ? options.longPrefillTokenThreshold : Infinity;
    this.byPriority = options.schedulingPolicy === "priority";
    this.waiting = createWaitingQueue(options.schedulingPolicy);
  }

  /** Queues a newly arrived sequence. */
  enqueue(s: Sequence): void {
    s.arrival = this.arrivals++;
    this.waiting.push(s);
    this.waitingCount++;
  }

  /** Picks this step's work and reserves its blocks; returns the ids preempted meanwhile. */
  schedule(shape: StepShape): string[] {
    this.scheduled.length = 0;
    this.budget = this.maxNumBatchedTokens;
    const preempted: string[] = [];
    this.scheduleRunning(true, preempted);
    this.scheduleRunning(false, preempted);
    // vLLM admits nothing new in a step that had to preempt: memory is already short.
    if (preempted.length === 0) this.admitWaiting(shape);
    return preempted;
  }

  /** Removes an aborted sequence from the running list (waiting entries are skipped lazily). */
  forget(s: Sequence): void {
    if (s.state === "waiting") this.waitingCount--;
    else if (s.state === "running") this.running.splice(this.running.indexOf(s), 1);
    s.state = "done";
  }

  /** Drops finished sequences from the running list, keeping order. */
  compactRunning(): void {
    let w = 0;
    for (const s of this.running) if (s.state === "running") this.running[w++] = s;
    this.running.length = w;
  }

  private scheduleRunning(decoding: boolean, preempted: string[]): void {
    for (let i = 0; i < this.running.length && this.budget > 0; i++) {
      const s = this.running[i]!;
      if (s.decoding !== decoding || s.scheduled) continue;
      const n = Math.min(s.total - s.computed, this.chunkCap, this.budget);
      if (this.reserve(s, n, preempted)) this.take(s, n);
    }
  }

  /** Gets blocks for `n` more tokens of `s`, preempting victims; false if `s` itself went. */
  private reserve(s: Sequence, n: number, preempted: string[]): boolean {
    while (!this.kv.grow(s, n)) {
      const victim = this.takeVictim();
      this.preempt(victim);
      preempted.push(victim.id);
      if (victim === s) return false;
    }
    return true;
  }

  /** Removes and returns the next preemption victim from the running list. */
  private takeVictim(): Sequence {
    const running = this.running;
    if (!this.byPriority) return running.pop()!;
    let v = running.length - 1;
    for (let i = v - 1; i >= 0; i--) if (servedBefore(running[v]!, running[i]!)) v = i;
    return running.splice(v, 1)[0]!;
  }

  private preempt(victim: Sequence): void {
    if (victim.scheduled) {
      victim.scheduled = false;
      this.budget += victim.stepTokens;
      this.scheduled.splice(this.scheduled.indexOf(victim), 1);
    }
    this.kv.free(victim);
    victim.decoding = false;
    victim.state = "waiting";
    this.waiting.requeue(victim);
    this.waitingCount++;
    this.preemptions++;
  }

  private admitWaiting(shape: StepShape): void {
    while (this.budget > 0 && this.running.length < this.maxNumSeqs) {
      const s = this.peekWaiting();
      if (!s) return;
      const n = this.kv.admit(s, Math.min(this.chunkCap, this.budget), shape);
      if (n === 0) return;
      this.waiting.shift();
      this.waitingCount--;
      s.state = "running";
      this.running.push(s);
      this.take(s, n);
    }
  }

  /** Head of the queue, dropping aborted entries on the way. */
  private peekWaiting(): Sequence | undefined {
    let s = this.waiting.peek();
    while (s && s.state !== "waiting") {
      this.waiting.shift();
      s = this.waiting.peek();
    }
    return s;
  }

  private take(s: Sequence, n: number): void {
    s.scheduled = true;
    s.stepTokens = n;
    this.scheduled.push(s);
    this.budget -= n;
  }
}
