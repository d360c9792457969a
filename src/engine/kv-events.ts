/**
 * KV event fan-out: events are built only while someone listens (check `active` before building one),
 * collected during one engine call and delivered synchronously, as one batch, when the call ends.
 */
import type { KvEvent, KvTier } from "./types.ts";

/** Where a cached block's tokens live, for BlockStored events: `src[offset, offset+blockSize)`. */
export interface BlockOrigin {
  /** Parent block hash; −1 for a chain's first block. */
  parent: number;
  src: Uint32Array;
  offset: number;
  lora: string | null;
}

/** Collects and delivers KV events; zero work when there are no listeners. */
export class KvEventBuffer {
  private readonly listeners = new Set<(events: KvEvent[]) => void>();
  private pending: KvEvent[] = [];
  /** True while at least one listener is subscribed. */
  active = false;

  constructor(private readonly blockSize: number) {}

  /** Adds a listener; returns its unsubscribe function. */
  subscribe(listener: (events: KvEvent[]) => void): () => void {
    this.listeners.add(listener);
    this.active = true;
    return () => {
      this.listeners.delete(listener);
      this.active = this.listeners.size > 0;
    };
  }

  /** Queues a BlockStored for `count` consecutive blocks starting at `hashes[from]` (origin of the first). */
  stored(hashes: ArrayLike<number>, from: number, count: number, origin: BlockOrigin, medium: KvTier): void {
    const blockHashes: bigint[] = new Array(count);
    for (let i = 0; i < count; i++) blockHashes[i] = BigInt(hashes[from + i]!);
    const end = origin.offset + count * this.blockSize;
    this.pending.push({
      type: "BlockStored",
      blockHashes,
      parentBlockHash: origin.parent < 0 ? null : BigInt(origin.parent),
      tokenIds: Array.from(origin.src.subarray(origin.offset, end)),
      blockSize: this.blockSize,
      lora: origin.lora,
      medium,
    });
  }

  /** Queues a BlockRemoved of one block. */
  removed(hash: number, medium: KvTier): void {
    this.pending.push({ type: "BlockRemoved", blockHashes: [BigInt(hash)], medium });
  }

  /** Queues AllBlocksCleared. */
  cleared(): void {
    this.pending.push({ type: "AllBlocksCleared" });
  }

  /** Delivers what was queued, if anything. */
  flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    for (const listener of this.listeners) listener(batch);
  }
}
