/**
 * Per-sequence KV-cache operations over the GPU pool and the offload tiers, with vLLM's hit rules:
 * whole blocks only, and the last prompt token is always recomputed, so at most floor((n−1)/B) blocks hit.
 */
import { BlockPool } from "./block-pool.ts";
import type { HitWatch } from "./hit-watch.ts";
import { KvEventBuffer } from "./kv-events.ts";
import { OffloadTiers } from "./offload-tiers.ts";
import type { ResolvedEngineOptions } from "./options.ts";
import type { Sequence } from "./sequence.ts";
import type { StepShape } from "./step-shape.ts";
import type { KvTier } from "./types.ts";

/** Prefix-cache counters in vLLM's terms (tokens). */
export interface CacheCounters {
  queries: number;
  hits: number;
  offloadHits: number;
}

/** Owns the pool, the tiers and the KV event buffer of one engine. */
export class KvManager {
  readonly events: KvEventBuffer;
  readonly tiers: OffloadTiers;
  readonly pool: BlockPool;
  readonly counters: CacheCounters = { queries: 0, hits: 0, offloadHits: 0 };
  private readonly blockSize: number;
  private readonly caching: boolean;
  private readonly blockBytes: number;
  /** Tier of each offload hit found by the last lookup (reused). */
  private tierOfHit: KvTier[] = [];

  constructor(o: ResolvedEngineOptions) {
    this.blockSize = o.blockSize;
    this.caching = o.enablePrefixCaching;
    this.blockBytes = o.blockBytes;
    this.events = new KvEventBuffer(o.blockSize);
    this.tiers = new OffloadTiers(o.numCpuBlocks, o.numStorageBlocks, this.events);
    this.pool = new BlockPool(o.numGpuBlocks, this.events, this.tiers);
  }

  /**
   * Admits a waiting sequence: takes its prefix hits and blocks for its first chunk (at most `budget`
   * tokens). Returns the chunk's token count, or 0 (nothing taken) when the blocks are not there.
   */
  admit(s: Sequence, budget: number, shape: StepShape): number {
    const B = this.blockSize;
    const maxHit = this.caching ? Math.min(s.hashes.length, Math.floor((s.total - 1) / B)) : 0;
    // Whatever hits the lookup finds, the first chunk needs at least this many new blocks; a queue head
    // that cannot start is retried every step, so skip its (up to thousands of) lookups while memory is short.
    const minNewBlocks = Math.min(Math.ceil(budget / B), Math.ceil(s.total / B) - maxHit);
    if (minNewBlocks > this.pool.freeBlocks) return 0;
    const hits = this.findGpuHits(s, maxHit, this.pool.freeBlocks - minNewBlocks);
    if (!hits) return 0;
    const gpuHits = hits.count;
    const hitsToTake = hits.freeHits;
    const remote = s.admittedOnce ? 0 : Math.min(s.remoteKvTokens, s.total - 1);
    // Blocks a remote prefill sent need no reload from an offload tier.
    const offloadHits = remote > gpuHits * B ? 0 : this.findOffloaded(s, gpuHits, maxHit);
    const local = (gpuHits + offloadHits) * B;
    const cached = Math.max(local, remote);
    const n = Math.min(s.total - cached, budget);
    const newBlocks = Math.ceil((cached + n) / B) - gpuHits;
    if (newBlocks + hitsToTake > this.pool.freeBlocks) return 0;
    for (let i = 0; i < gpuHits; i++) {
      const b = hits.blocks[i]!;
      this.pool.acquire(b);
      s.blocks.push(b);
    }
    hits.clear();
    this.reload(s, gpuHits, offloadHits, shape);
    for (let i = gpuHits + offloadHits; i < gpuHits + newBlocks; i++) s.blocks.push(this.pool.allocate());
    this.countLookup(s, gpuHits * B, cached - gpuHits * B);
    s.computed = cached;
    s.prefillStart = cached;
    s.committed = gpuHits + offloadHits;
    return n;
  }

  /** Adds blocks so `s` can compute `n` more tokens; false (nothing taken) when too few are free. */
  grow(s: Sequence, n: number): boolean {
    const need = Math.ceil((s.computed + n) / this.blockSize) - s.blocks.length;
    if (need > this.pool.freeBlocks) return false;
    for (let i = 0; i < need; i++) s.blocks.push(this.pool.allocate());
    return true;
  }

  /** Registers the prompt blocks `s` has filled since the last call, emitting BlockStored per run. */
  commit(s: Sequence): void {
    if (!this.caching) return;
    const full = Math.min(Math.floor(s.computed / this.blockSize), s.hashes.length);
    let runStart = -1;
    for (let i = s.committed; i < full; i++) {
      const registered = this.registerBlock(s, i, s.blocks[i]!);
      if (registered && runStart < 0) runStart = i;
      if (!registered && runStart >= 0) runStart = this.storedRun(s, runStart, i);
    }
    if (runStart >= 0) this.storedRun(s, runStart, full);
    s.committed = Math.max(s.committed, full);
  }

  /** Returns all of `s`'s blocks to the pool (cached ones stay hittable until evicted). */
  free(s: Sequence): void {
    this.pool.release(s.blocks, s.blocks.length);
    s.blocks.length = 0;
    s.computed = 0;
    s.committed = 0;
  }

  /**
   * `s`'s leading GPU hits (at most `maxHit`), resumed from the pool's watch when `s` was the last
   * one looked up. Null as soon as the unreferenced hits alone exceed `maxFreeHits`: admission must
   * then fail whatever the rest of the chain holds (free hits only grow along it).
   */
  private findGpuHits(s: Sequence, maxHit: number, maxFreeHits: number): HitWatch | null {
    const watch = this.pool.watch;
    watch.follow(s, maxHit);
    if (watch.freeHits > maxFreeHits) return null;
    while (watch.count < maxHit) {
      const b = this.pool.lookup(s.hashes[watch.count]!);
      if (b < 0) break;
      watch.push(b, this.pool.isFree(b));
      if (watch.freeHits > maxFreeHits) return null;
    }
    return watch;
  }

  private findOffloaded(s: Sequence, from: number, maxHit: number): number {
    if (!this.tiers.enabled) return 0;
    let i = from;
    for (; i < maxHit; i++) {
      const tier = this.tiers.find(s.hashes[i]!);
      if (tier === null) break;
      this.tierOfHit[i - from] = tier;
    }
    return i - from;
  }

  /** Allocates GPU blocks for offload hits, registers them, and charges their transfer to the step. */
  private reload(s: Sequence, from: number, count: number, shape: StepShape): void {
    for (let k = 0; k < count; k++) {
      const b = this.pool.allocate();
      s.blocks.push(b);
      this.registerBlock(s, from + k, b);
      if (this.tierOfHit[k] === "CPU") shape.cpuReloadBytes += this.blockBytes;
      else shape.storageReloadBytes += this.blockBytes;
    }
    if (count > 0 && this.events.active) this.storedRun(s, from, from + count);
  }

  private registerBlock(s: Sequence, i: number, b: number): boolean {
    const parent = i === 0 ? -1 : s.hashes[i - 1]!;
    return this.pool.register(b, s.hashes[i]!, parent, s.prompt, i * this.blockSize, s.lora);
  }

  /** Emits BlockStored for prompt blocks [from, to) of `s`; returns −1 (no open run). */
  private storedRun(s: Sequence, from: number, to: number): number {
    if (!this.events.active || to <= from) return -1;
    const parent = from === 0 ? -1 : s.hashes[from - 1]!;
    const origin = { parent, src: s.prompt, offset: from * this.blockSize, lora: s.lora };
    this.events.stored(s.hashes, from, to - from, origin, "GPU");
    return -1;
  }

  /** `externalTokens`: loaded from an offload tier or a remote prefill rather than recomputed. */
  private countLookup(s: Sequence, gpuHitTokens: number, externalTokens: number): void {
    if (!s.admittedOnce) {
      s.admittedOnce = true;
      s.cachedTokens = gpuHitTokens + externalTokens;
      if (!this.caching) return;
      this.counters.queries += s.promptLen;
      this.counters.hits += gpuHitTokens;
    }
    this.counters.offloadHits += externalTokens;
  }
}
