/**
 * Offload tiers below the GPU: blocks evicted from the GPU prefix cache go to a CPU LRU tier; blocks
 * falling off the CPU tier go to a storage LRU tier; falling off storage drops them. A prefix hit in a tier
 * is reloaded (the engine charges bytes / bandwidth) and stays in the tier, refreshed.
 */
import type { BlockOrigin, KvEventBuffer } from "./kv-events.ts";
import type { KvTier } from "./types.ts";

/** One LRU tier: hash → where its tokens came from (kept for BlockStored events). */
class LruTier {
  /** Map iteration order is insertion order: the first key is the least recently used. */
  readonly blocks = new Map<number, BlockOrigin>();

  constructor(
    readonly medium: KvTier,
    readonly capacity: number,
  ) {}

  /** Refreshes `hash` if present; true when it was. */
  touch(hash: number): boolean {
    const origin = this.blocks.get(hash);
    if (origin === undefined) return false;
    this.blocks.delete(hash);
    this.blocks.set(hash, origin);
    return true;
  }
}

/** The CPU and storage tiers of one engine (either may be absent). */
export class OffloadTiers {
  private readonly tiers: LruTier[];

  constructor(
    cpuBlocks: number,
    storageBlocks: number,
    private readonly events: KvEventBuffer,
  ) {
    this.tiers = [];
    if (cpuBlocks > 0) this.tiers.push(new LruTier("CPU", cpuBlocks));
    if (storageBlocks > 0) this.tiers.push(new LruTier("DISK", storageBlocks));
  }

  /** True when at least one tier exists. */
  get enabled(): boolean {
    return this.tiers.length > 0;
  }

  /** Offloads a block evicted from the GPU into the first tier (cascading LRU victims downwards). */
  offload(hash: number, origin: BlockOrigin): void {
    this.insert(0, hash, origin);
  }

  /** The tier holding `hash` (refreshed), or null. */
  find(hash: number): KvTier | null {
    for (const tier of this.tiers) if (tier.touch(hash)) return tier.medium;
    return null;
  }

  /** Blocks held per tier. */
  sizes(): { cpu: number; storage: number } {
    let cpu = 0;
    let storage = 0;
    for (const t of this.tiers) {
      if (t.medium === "CPU") cpu = t.blocks.size;
      else storage = t.blocks.size;
    }
    return { cpu, storage };
  }

  /** Drops every block of every tier (events say AllBlocksCleared once, from the caller). */
  clear(): void {
    for (const t of this.tiers) t.blocks.clear();
  }

  private insert(level: number, hash: number, origin: BlockOrigin): void {
    const tier = this.tiers[level];
    if (!tier || tier.touch(hash)) return;
    if (tier.blocks.size >= tier.capacity) this.demoteOldest(level, tier);
    tier.blocks.set(hash, origin);
    if (this.events.active) this.events.stored([hash], 0, 1, origin, tier.medium);
  }

  private demoteOldest(level: number, tier: LruTier): void {
    const oldest = tier.blocks.keys().next().value as number;
    const origin = tier.blocks.get(oldest)!;
    tier.blocks.delete(oldest);
    if (this.events.active) this.events.removed(oldest, tier.medium);
    this.insert(level + 1, oldest, origin);
  }
}
