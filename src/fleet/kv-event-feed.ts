/**
 * The engines' KV events delivered to the router's KV-event consumers (the precise prefix plugins)
 * in virtual time, with no sockets. The feed subscribes to each engine as `llmd sim`'s publisher
 * does and publishes a batch the moment the engine call that emitted it returns: a step's batch
 * when the step is scheduled, as vLLM does with async scheduling (its default), where step k's
 * events go out with step k−1's outputs, i.e. as step k starts. The batch reaches the router
 * `delayMs` later (the publisher → index latency). The feed also measures that staleness: for
 * every block an engine removes, the time from the engine call that evicted it to the router
 * applying the removal.
 */
import type { Clock } from "../core/clock.ts";
import type { KvEvent } from "../engine/types.ts";
import type { KvEventConsumer } from "../scheduler/framework/hosted.ts";
import type { Replica } from "./replica.ts";

/** One engine call's events on their way to the router. */
export interface KvDelivery {
  replica: Replica;
  events: KvEvent[];
  /** When the engine call ran (evictions happen then) and the batch was published, clock ms. */
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

/** Where the feed's batches go: the host queues each for its `deliverAtMs`. */
export type KvDeliveryQueue = (delivery: KvDelivery) => void;

/** See the module comment. One feed per run; every router replica's consumers get every batch. */
export class KvEventFeed {
  readonly stats: KvFeedStats = { batches: 0, storedBlocks: {}, removedBlocks: {} };
  /** Per delivery with removals: its staleness (ms) and the blocks it removed. */
  private readonly staleness: { ms: number; blocks: number }[] = [];
  private removed = 0;

  constructor(
    private readonly consumers: readonly KvEventConsumer[],
    private readonly delayMs: number,
    private readonly model: string,
    private readonly clock: Clock,
    private readonly queue: KvDeliveryQueue,
  ) {}

  /** Publishes each batch `replica`'s engine emits, when it emits it. */
  attach(replica: Replica): void {
    replica.engine.onKvEvent((events) => {
      const now = this.clock.now();
      this.queue({ replica, events, emittedAtMs: now, deliverAtMs: now + this.delayMs });
    });
  }

  /**
   * Hands a delivery to every consumer; the time since it was emitted, as the host's clock reads it
   * now, is its staleness.
   */
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
    this.staleness.push({ ms: this.clock.now() - delivery.emittedAtMs, blocks: removed });
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
