/**
 * The engines' KV events delivered to the router's KV-event consumers (the precise prefix plugins)
 * in virtual time, with no sockets. What one engine call emits is published when its step ends
 * (vLLM publishes a step's events after the step ran) and reaches the router `delayMs` later (the
 * publisher → index latency), so the router's view is as stale as a live one. The feed also
 * measures that staleness: for every block an engine removes, the time from the engine call that
 * evicted it to the router applying the removal.
 */
import type { KvEvent } from "../engine/types.ts";
import type { KvEventConsumer } from "../scheduler/framework/hosted.ts";
import type { Replica } from "./replica.ts";

/** One engine call's events on their way to the router. */
export interface KvDelivery {
  replica: Replica;
  events: KvEvent[];
  /** When the engine call ran (evictions happen then), clock ms. */
  emittedAtMs: number;
  /** When the router applies them, clock ms. */
  deliverAtMs: number;
}

/** What the feed delivered. */
export interface KvFeedStats {
  /** Event batches delivered (one per engine call that emitted any). */
  batches: number;
  /** Engine blocks stored / removed, by tier (`medium`: GPU, CPU, DISK). */
  storedBlocks: Record<string, number>;
  removedBlocks: Record<string, number>;
}

/** See the module comment. One feed per run; every router replica's consumers get every batch. */
export class KvEventFeed {
  private readonly pending: KvEvent[][] = [];
  readonly stats: KvFeedStats = { batches: 0, storedBlocks: {}, removedBlocks: {} };
  /** Per delivery with removals: its staleness (ms) and the blocks it removed. */
  private readonly staleness: { ms: number; blocks: number }[] = [];
  private removed = 0;

  constructor(
    private readonly consumers: readonly KvEventConsumer[],
    private readonly delayMs: number,
    private readonly model: string,
  ) {}

  /** Starts collecting `replica`'s engine events. */
  attach(replica: Replica): void {
    this.pending[replica.index] = [];
    replica.engine.onKvEvent((events) => {
      for (const event of events) this.pending[replica.index]!.push(event);
    });
  }

  /**
   * Publishes what `replica`'s engine emitted since the last call, at `publishAtMs` (its step's
   * end); undefined when it emitted nothing.
   */
  publish(replica: Replica, emittedAtMs: number, publishAtMs: number): KvDelivery | undefined {
    const events = this.pending[replica.index];
    if (!events || events.length === 0) return undefined;
    this.pending[replica.index] = [];
    return { replica, events, emittedAtMs, deliverAtMs: publishAtMs + this.delayMs };
  }

  /** Hands a delivery to every consumer (the host's clock reads its delivery time). */
  deliver(delivery: KvDelivery): void {
    const key = delivery.replica.endpoint.metadata.key;
    for (const consumer of this.consumers) consumer.kvEvents(delivery.events, key, this.model);
    const stats = this.stats;
    stats.batches++;
    let removed = 0;
    for (const event of delivery.events) {
      if (event.type === "AllBlocksCleared") continue;
      const blocks = event.blockHashes.length;
      const byTier = event.type === "BlockStored" ? stats.storedBlocks : stats.removedBlocks;
      byTier[event.medium] = (byTier[event.medium] ?? 0) + blocks;
      if (event.type === "BlockRemoved") removed += blocks;
    }
    if (removed === 0) return;
    this.removed += removed;
    this.staleness.push({ ms: delivery.deliverAtMs - delivery.emittedAtMs, blocks: removed });
  }

  /**
   * Nearest-rank percentile `p` (0–100) over removed blocks of the time from the engine evicting a
   * block to the router applying its removal, ms (NaN when nothing was removed).
   */
  stalenessPercentile(p: number): number {
    const sorted = [...this.staleness].sort((a, b) => a.ms - b.ms);
    const rank = Math.max(1, Math.ceil((p / 100) * this.removed));
    let seen = 0;
    for (const s of sorted) {
      seen += s.blocks;
      if (seen >= rank) return s.ms;
    }
    return Number.NaN;
  }
}
