/**
 * The GPU's paged KV cache: fixed-size blocks with reference counts and a prefix cache
 * (hash → block). Unreferenced blocks sit in one free queue ordered by eviction priority: blank blocks at
 * the head (reused first), cached blocks appended at the tail as they are released, so the head-most
 * cached block is the least recently used. Allocation pops the head, evicting its hash if it had one.
 * Every block is in exactly one state: free (blank, ref 0), cached (hashed, ref 0) or used (ref > 0).
 */
import type { BlockOrigin, KvEventBuffer } from "./kv-events.ts";
import { BlockHashTable } from "./hash-table.ts";
import { HitWatch } from "./hit-watch.ts";
import type { OffloadTiers } from "./offload-tiers.ts";

const NONE = -1;

/** Block counts by state; free + cached + used = capacity. */
export interface BlockCounts {
  free: number;
  cached: number;
  used: number;
}

/** GPU block pool with prefix cache and LRU eviction. */
export class BlockPool {
  /** Blocks evicted from the prefix cache so far. */
  evictions = 0;
  /** The blocked queue head's prefix hits, kept current by this pool (see hit-watch.ts). */
  readonly watch: HitWatch;
  private readonly ref: Int32Array;
  private readonly hash: Float64Array;
  private readonly parent: Float64Array;
  private readonly offset: Int32Array;
  private readonly src: (Uint32Array | null)[];
  private readonly lora: (string | null)[];
  private readonly next: Int32Array;
  private readonly prev: Int32Array;
  private readonly cache: BlockHashTable;
  /** Sentinel node index `capacity` closes the circular free list. */
  private readonly sentinel: number;
  private freeLength = 0;
  /** Hashed blocks in the free queue. */
  private cachedFree = 0;

  constructor(
    readonly capacity: number,
    private readonly events: KvEventBuffer,
    private readonly tiers: OffloadTiers,
  ) {
    this.ref = new Int32Array(capacity);
    this.hash = new Float64Array(capacity).fill(NONE);
    this.parent = new Float64Array(capacity);
    this.offset = new Int32Array(capacity);
    this.src = new Array(capacity).fill(null);
    this.lora = new Array(capacity).fill(null);
    this.next = new Int32Array(capacity + 1);
    this.prev = new Int32Array(capacity + 1);
    this.cache = new BlockHashTable(capacity);
    this.watch = new HitWatch(capacity);
    this.sentinel = capacity;
    this.next[this.sentinel] = this.prev[this.sentinel] = this.sentinel;
    for (let b = 0; b < capacity; b++) this.linkBefore(b, this.sentinel);
  }

  /** Unreferenced blocks (blank or cached): what allocation can draw from. */
  get freeBlocks(): number {
    return this.freeLength;
  }

  /** Block counts by state (O(1)). */
  counts(): BlockCounts {
    const cached = this.cachedFree;
    return { free: this.freeLength - cached, cached, used: this.capacity - this.freeLength };
  }

  /** Block holding `hash`, or −1. */
  lookup(hash: number): number {
    return this.cache.get(hash);
  }

  /** True when block `b` is unreferenced (so taking it costs one free block). */
  isFree(b: number): boolean {
    return this.ref[b] === 0;
  }

  /** Takes a reference on a cached block (a prefix hit). */
  acquire(b: number): void {
    const before = this.ref[b]!;
    this.ref[b] = before + 1;
    if (before > 0) return;
    if (this.watch.has(b)) this.watch.freeHits--;
    this.unlink(b);
    this.cachedFree--;
  }

  /** Pops a blank block (evicting the LRU cached one if need be); caller checked `freeBlocks > 0`. */
  allocate(): number {
    const b = this.next[this.sentinel]!;
    if (b === this.sentinel) throw new Error("block pool exhausted: caller must check freeBlocks");
    this.unlink(b);
    if (this.hash[b] !== NONE) {
      this.cachedFree--;
      this.evict(b);
    }
    this.ref[b] = 1;
    return b;
  }

  /**
   * Registers full block `b` under `hash` so later requests can hit it. If another block already holds
   * that hash, `b` stays anonymous (it is freed as blank). `parent` is −1 for a chain's first block; the
   * block's tokens are `src[offset, offset + blockSize)` (kept by reference, only with offload tiers).
   * Returns whether `b` was registered.
   */
  register(
    b: number,
    hash: number,
    parent: number,
    src: Uint32Array,
    offset: number,
    lora: string | null,
  ): boolean {
    if (!this.cache.insertIfAbsent(hash, b)) return false;
    this.hash[b] = hash;
    // The origin is read only when an evicted block is offloaded; without tiers, keeping `src` would
    // pin every prompt that ever filled a cached block (hundreds of KB each for agentic prompts).
    if (!this.tiers.enabled) return true;
    this.parent[b] = parent;
    this.src[b] = src;
    this.offset[b] = offset;
    this.lora[b] = lora;
    return true;
  }

  /** Drops references on `blocks`, last block first, so a request's tail is evicted before its head. */
  release(blocks: ArrayLike<number>, count: number): void {
    for (let i = count - 1; i >= 0; i--) {
      const b = blocks[i]!;
      if (--this.ref[b]! > 0) continue;
      if (this.watch.has(b)) this.watch.freeHits++;
      if (this.hash[b] === NONE) this.linkBefore(b, this.next[this.sentinel]!);
      else {
        this.linkBefore(b, this.sentinel);
        this.cachedFree++;
      }
    }
  }

  /** Forgets every cached hash; false (and nothing done) while any block is referenced. */
  clearCache(): boolean {
    if (this.freeLength !== this.capacity) return false;
    this.cache.forEachValue((b) => {
      this.hash[b] = NONE;
      this.src[b] = null;
    });
    this.cache.clear();
    this.watch.clear();
    this.cachedFree = 0;
    return true;
  }

  /** Drops `b`'s hash (`b` is unreferenced until the caller takes it). */
  private evict(b: number): void {
    if (this.watch.has(b)) this.watch.evicted(b, this.ref);
    const h = this.hash[b]!;
    this.cache.delete(h);
    this.hash[b] = NONE;
    this.evictions++;
    if (this.events.active) this.events.removed(h, "GPU");
    if (this.tiers.enabled) this.tiers.offload(h, this.originOf(b));
    this.src[b] = null;
  }

  /** Where block `b`'s tokens came from (allocates; only meaningful with offload tiers enabled). */
  originOf(b: number): BlockOrigin {
    return { parent: this.parent[b]!, src: this.src[b]!, offset: this.offset[b]!, lora: this.lora[b]! };
  }

  private linkBefore(b: number, at: number): void {
    const p = this.prev[at]!;
    this.next[p] = b;
    this.prev[b] = p;
    this.next[b] = at;
    this.prev[at] = b;
    this.freeLength++;
  }

  private unlink(b: number): void {
    const p = this.prev[b]!;
    const n = this.next[b]!;
    this.next[p] = n;
    this.prev[n] = p;
    this.freeLength--;
  }
}
