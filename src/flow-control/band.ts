/**
 * Queue state of one priority band: its flows (one heap per fairness id), byte/request counters and
 * capacity limits. Internal to the controller; policies see it through `BandView` / `FlowView`.
 */
import type { BandSettings } from "./config.ts";
import { type HeapNode, heapNode, IndexedHeap } from "./heap.ts";
import type { BandView, FairnessPolicy, FlowItem, FlowView, OrderingPolicy } from "./types.ts";

/** One queued item with its precomputed ordering key, TTL, deadline and heap slots. */
export class QueueEntry {
  /** Absolute deadline (ms) for the current endpoint mode; Infinity = none. */
  deadline = Number.POSITIVE_INFINITY;
  readonly flowNode: HeapNode<QueueEntry> = heapNode(this);
  readonly deadlineNode: HeapNode<QueueEntry> = heapNode(this);

  constructor(
    readonly item: FlowItem,
    /** Arrival sequence number: the last tie-breaker, so order is total and deterministic. */
    readonly seq: number,
    readonly sortKey: number,
    /** Effective queue-wait budget while the pool has endpoints (ms; Infinity = none). */
    readonly ttlMs: number,
    readonly flow: Flow,
  ) {}
}

/** True when `a` dispatches before `b` within a flow: ordering key, then arrival time, then sequence. */
export function entryBefore(a: QueueEntry, b: QueueEntry): boolean {
  if (a.sortKey !== b.sortKey) return a.sortKey < b.sortKey;
  if (a.item.enqueuedAt !== b.item.enqueuedAt) return a.item.enqueuedAt < b.item.enqueuedAt;
  return a.seq < b.seq;
}

/** The queue of one (fairnessId, priority) flow. */
export class Flow implements FlowView {
  readonly heap = new IndexedHeap<QueueEntry>(entryBefore);
  bytes = 0;

  constructor(
    readonly fairnessId: string,
    readonly priority: number,
  ) {}

  get length(): number {
    return this.heap.size;
  }

  head(): FlowItem | undefined {
    return this.heap.peek()?.value.item;
  }

  headEntry(): QueueEntry | undefined {
    return this.heap.peek()?.value;
  }
}

/** A priority band: flows, counters, limits and its fairness/ordering policies. */
export class Band implements BandView {
  readonly activeFlows: Flow[] = [];
  private readonly flows = new Map<string, Flow>();
  requests = 0;
  bytes = 0;
  fairnessState: unknown;

  constructor(
    readonly priority: number,
    readonly settings: BandSettings,
    readonly fairness: FairnessPolicy,
    readonly ordering: OrderingPolicy,
  ) {}

  headBefore(a: FlowView, b: FlowView): boolean {
    const headA = (a as Flow).headEntry();
    const headB = (b as Flow).headEntry();
    if (!headA || !headB) return headA !== undefined;
    return entryBefore(headA, headB);
  }

  /** Whether one more item of `bytes` fits under this band's limits. */
  fits(bytes: number): boolean {
    return this.requests + 1 <= this.settings.maxRequests && this.bytes + bytes <= this.settings.maxBytes;
  }

  /** Creates the entry for `item` in its flow (creating the flow on first use). */
  add(item: FlowItem, seq: number, ttlMs: number): QueueEntry {
    const flow = this.flowFor(item.fairnessId);
    const entry = new QueueEntry(item, seq, this.ordering.sortKey(item, ttlMs), ttlMs, flow);
    flow.heap.push(entry.flowNode);
    flow.bytes += item.bytes;
    this.requests += 1;
    this.bytes += item.bytes;
    return entry;
  }

  /** Removes `entry` from its flow, dropping the flow when it empties. */
  remove(entry: QueueEntry): void {
    const flow = entry.flow;
    if (!flow.heap.remove(entry.flowNode)) return;
    flow.bytes -= entry.item.bytes;
    this.requests -= 1;
    this.bytes -= entry.item.bytes;
    if (flow.length === 0) this.dropFlow(flow);
  }

  private flowFor(fairnessId: string): Flow {
    let flow = this.flows.get(fairnessId);
    if (flow) return flow;
    flow = new Flow(fairnessId, this.priority);
    this.flows.set(fairnessId, flow);
    let at = this.activeFlows.length;
    while (at > 0 && this.activeFlows[at - 1]!.fairnessId > fairnessId) at -= 1;
    this.activeFlows.splice(at, 0, flow);
    return flow;
  }

  private dropFlow(flow: Flow): void {
    this.flows.delete(flow.fairnessId);
    const at = this.activeFlows.indexOf(flow);
    if (at >= 0) this.activeFlows.splice(at, 1);
  }
}
