/**
 * Approximate prefix index: chained block hash → the servers believed to hold it, with a
 * per-server LRU of hashes whose eviction removes the server from that hash (reference §2.7).
 * Servers are endpoint keys, so each data-parallel rank (its own endpoint key) is its own server.
 *
 * Unlike llm-d, a server's match counts only the blocks it holds contiguously from the start,
 * which is what its engine can actually reuse.
 */

/** One server's slot: its key and its hashes in LRU order (first = least recent). */
interface ServerSlot {
  key: string;
  capacity: number;
  readonly lru: Set<number>;
}

/** Index of prefix block hashes per server. Not thread-shared: one per router replica. */
export class PrefixIndex {
  private readonly holders = new Map<number, number[]>();
  private readonly slots: (ServerSlot | undefined)[] = [];
  private readonly slotByKey = new Map<string, number>();
  private aliveScratch = new Int32Array(16);
  private slotScratch = new Int32Array(16);

  /** @param defaultCapacity hashes each server holds before LRU eviction (≥ 1). */
  constructor(private readonly defaultCapacity: number) {}

  /** Distinct hashes held by at least one server. */
  get size(): number {
    return this.holders.size;
  }

  /** Hashes held by `serverKey` (0 if unknown). */
  entries(serverKey: string): number {
    const slot = this.slotByKey.get(serverKey);
    return slot === undefined ? 0 : this.slots[slot]!.lru.size;
  }

  /** Capacity of `serverKey` in hashes (the default if never set). */
  capacity(serverKey: string): number {
    const slot = this.slotByKey.get(serverKey);
    return slot === undefined ? this.defaultCapacity : this.slots[slot]!.capacity;
  }

  /** Sets a server's capacity (≥ 1), evicting its least recent hashes beyond it. */
  setCapacity(serverKey: string, capacity: number): void {
    const slot = this.slotFor(serverKey);
    const server = this.slots[slot]!;
    if (server.capacity === capacity) return;
    server.capacity = Math.max(1, capacity);
    while (server.lru.size > server.capacity) this.evictOldest(slot, server);
  }

  /**
   * Records that `serverKey` now holds `hashes[0..count)`. The deepest block is touched first so
   * the prefix root ends most recent: under pressure a server loses the tails of its prefixes
   * before their roots, as vLLM frees blocks.
   */
  insert(serverKey: string, hashes: Float64Array, count: number): void {
    const slot = this.slotFor(serverKey);
    const server = this.slots[slot]!;
    for (let i = Math.min(count, hashes.length) - 1; i >= 0; i--) {
      const hash = hashes[i]!;
      if (server.lru.delete(hash)) {
        server.lru.add(hash);
        continue;
      }
      server.lru.add(hash);
      const list = this.holders.get(hash);
      if (list) list.push(slot);
      else this.holders.set(hash, [slot]);
      if (server.lru.size > server.capacity) this.evictOldest(slot, server);
    }
  }

  /**
   * For each of `serverKeys`, the number of leading blocks of `hashes[0..count)` it holds
   * contiguously, written into `out` (aligned with `serverKeys`). Stops at the first block no
   * remaining candidate holds, so a cold prompt costs one lookup.
   */
  match(hashes: Float64Array, count: number, serverKeys: readonly string[], out: Int32Array): void {
    const n = serverKeys.length;
    this.ensureScratch(n);
    const alive = this.aliveScratch;
    const slotOf = this.slotScratch;
    let aliveCount = 0;
    for (let a = 0; a < n; a++) {
      out[a] = 0;
      const slot = this.slotByKey.get(serverKeys[a]!);
      if (slot === undefined) continue;
      slotOf[a] = slot;
      alive[aliveCount++] = a;
    }
    let block = 0;
    for (; block < count && aliveCount > 0; block++) {
      const list = this.holders.get(hashes[block]!);
      if (list === undefined) break;
      let kept = 0;
      for (let i = 0; i < aliveCount; i++) {
        const a = alive[i]!;
        if (list.includes(slotOf[a]!)) alive[kept++] = a;
        else out[a] = block;
      }
      aliveCount = kept;
    }
    for (let i = 0; i < aliveCount; i++) out[alive[i]!] = block;
  }

  /** Forgets a server (endpoint removed from the pool). */
  removeServer(serverKey: string): void {
    const slot = this.slotByKey.get(serverKey);
    if (slot === undefined) return;
    const server = this.slots[slot]!;
    for (const hash of server.lru) this.dropHolder(hash, slot);
    this.slots[slot] = undefined;
    this.slotByKey.delete(serverKey);
  }

  private slotFor(serverKey: string): number {
    const known = this.slotByKey.get(serverKey);
    if (known !== undefined) return known;
    let slot = this.slots.indexOf(undefined);
    if (slot < 0) slot = this.slots.length;
    this.slots[slot] = { key: serverKey, capacity: this.defaultCapacity, lru: new Set() };
    this.slotByKey.set(serverKey, slot);
    return slot;
  }

  private evictOldest(slot: number, server: ServerSlot): void {
    const oldest = server.lru.values().next().value;
    if (oldest === undefined) return;
    server.lru.delete(oldest);
    this.dropHolder(oldest, slot);
  }

  private dropHolder(hash: number, slot: number): void {
    const list = this.holders.get(hash);
    if (!list) return;
    const at = list.indexOf(slot);
    if (at >= 0) {
      list[at] = list[list.length - 1]!;
      list.pop();
    }
    if (list.length === 0) this.holders.delete(hash);
  }

  private ensureScratch(n: number): void {
    if (this.aliveScratch.length >= n) return;
    this.aliveScratch = new Int32Array(n * 2);
    this.slotScratch = new Int32Array(n * 2);
  }
}
