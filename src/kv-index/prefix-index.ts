/**
 * Approximate prefix index: chained block key → the servers believed to hold it, with a
 * per-server LRU of keys whose eviction removes the server from that key (reference §2.7).
 * Servers are endpoint keys, so each data-parallel rank (its own endpoint key) is its own server.
 *
 * Unlike llm-d, a server's match counts only the blocks it holds contiguously from the start,
 * which is what its engine can actually reuse.
 *
 * Storage is typed arrays (KeyTable + EntryPool): a lookup, touch, insert or eviction allocates
 * nothing; matching is a binary search per server (see `match`).
 *
 * An insert may be recorded for later (`insertLater`): the index applies what was recorded, in
 * order, before any other call reads or changes it, so every caller sees the same index as with
 * `insert`, while the owner chooses when the work runs (`settle`).
 */
import { EntryPool, type LruList, NONE } from "./entry-pool.ts";
import { KeyTable } from "./key-table.ts";

/** One server's slot: its key, capacity and LRU list of entries. */
interface ServerSlot extends LruList {
  key: string;
  capacity: number;
}

/** An insert recorded by `insertLater`, not yet applied. */
interface LaterInsert {
  serverKey: string;
  hashes: Float64Array | (() => Float64Array);
  count: number;
}

/** Index of prefix block keys per server. Not thread-shared: one per router replica. */
export class PrefixIndex {
  /** Key → first entry holding it. */
  private readonly firstHolder = new KeyTable();
  private readonly entries_ = new EntryPool();
  private readonly slots: (ServerSlot | undefined)[] = [];
  private readonly slotByKey = new Map<string, number>();
  private aliveScratch = new Int32Array(16);
  private slotScratch = new Int32Array(16);
  private readonly later: LaterInsert[] = [];

  /** @param defaultCapacity keys each server holds before LRU eviction (≥ 1). */
  constructor(private readonly defaultCapacity: number) {}

  /** Distinct keys held by at least one server. */
  get size(): number {
    this.settle();
    return this.firstHolder.size;
  }

  /** Keys held by `serverKey` (0 if unknown). */
  entries(serverKey: string): number {
    this.settle();
    const slot = this.slotByKey.get(serverKey);
    return slot === undefined ? 0 : this.slots[slot]!.size;
  }

  /** Capacity of `serverKey` in keys (the default if never set). */
  capacity(serverKey: string): number {
    this.settle();
    const slot = this.slotByKey.get(serverKey);
    return slot === undefined ? this.defaultCapacity : this.slots[slot]!.capacity;
  }

  /** Sets a server's capacity (≥ 1), evicting its least recent keys beyond it. */
  setCapacity(serverKey: string, capacity: number): void {
    this.settle();
    const server = this.slots[this.slotFor(serverKey)]!;
    if (server.capacity === capacity) return;
    server.capacity = Math.max(1, capacity);
    while (server.size > server.capacity) this.evict(server, server.head);
  }

  /**
   * Records that `serverKey` now holds `hashes[0..count)`. The deepest block is touched first so
   * the prefix root ends most recent: under pressure a server loses the tails of its prefixes
   * before their roots, as vLLM frees blocks.
   */
  insert(serverKey: string, hashes: Float64Array, count: number): void {
    this.settle();
    this.apply(serverKey, hashes, count);
  }

  /**
   * Records `insert(serverKey, hashes, count)` to be applied at the next `settle`, which every
   * other call runs first. `hashes` must stay unchanged until then; given as a function, it is
   * called then (so the keys themselves can be computed after the request has left).
   */
  insertLater(serverKey: string, hashes: Float64Array | (() => Float64Array), count: number): void {
    this.later.push({ serverKey, hashes, count });
  }

  /** Applies the inserts recorded by `insertLater`, in the order they were recorded. */
  settle(): void {
    const later = this.later;
    if (later.length === 0) return;
    for (const { serverKey, hashes, count } of later)
      this.apply(serverKey, typeof hashes === "function" ? hashes() : hashes, count);
    later.length = 0;
  }

  private apply(serverKey: string, hashes: Float64Array, count: number): void {
    const slot = this.slotFor(serverKey);
    const server = this.slots[slot]!;
    const pool = this.entries_;
    this.firstHolder.warm(hashes, Math.min(count, hashes.length));
    for (let i = Math.min(count, hashes.length) - 1; i >= 0; i--) {
      const key = hashes[i]!;
      const first = this.firstHolder.get(key);
      let id = first;
      while (id !== NONE && pool.server[id] !== slot) id = pool.nextHolder[id]!;
      if (id !== NONE) {
        pool.unlink(server, id);
        pool.append(server, id);
        continue;
      }
      id = pool.alloc(key, slot);
      pool.nextHolder[id] = first;
      this.firstHolder.set(key, id);
      pool.append(server, id);
      if (server.size > server.capacity) this.evict(server, server.head);
    }
  }

  /** Whether `serverKey` holds block key `key`. */
  holds(serverKey: string, key: number): boolean {
    this.settle();
    const slot = this.slotByKey.get(serverKey);
    return slot !== undefined && this.holdsSlot(slot, key);
  }

  /**
   * For each of `serverKeys`, the number of leading blocks of `hashes[0..count)` it holds
   * contiguously, written into `out` (aligned with `serverKeys`).
   *
   * `hashes` is one chain from the prompt's root, as the producer hashes and inserts it. A
   * server's held keys are then ancestor-closed: every insert touches a block's ancestors after
   * the block itself, so under LRU a block never outlives its ancestors on one server. Holding is
   * therefore monotone along the chain and a binary search finds each server's contiguous match
   * in O(log count) lookups (≈ 12 for 3 000 blocks) instead of a walk over every block; a cold
   * prompt costs one lookup per server.
   */
  match(hashes: Float64Array, count: number, serverKeys: readonly string[], out: Int32Array): void {
    this.settle();
    const n = Math.min(count, hashes.length);
    const aliveCount = this.resolveCandidates(serverKeys, out);
    if (aliveCount === 0 || n === 0 || this.firstHolder.get(hashes[0]!) === NONE) return;
    const heldByAny = this.deepestHeld(hashes, n, -1);
    for (let i = 0; i < aliveCount; i++) {
      const a = this.aliveScratch[i]!;
      out[a] = this.deepestHeld(hashes, heldByAny, this.slotScratch[a]!);
    }
  }

  /** Forgets a server (endpoint removed from the pool). */
  removeServer(serverKey: string): void {
    this.settle();
    const slot = this.slotByKey.get(serverKey);
    if (slot === undefined) return;
    const server = this.slots[slot]!;
    while (server.head !== NONE) this.evict(server, server.head);
    this.slots[slot] = undefined;
    this.slotByKey.delete(serverKey);
  }

  /** Zeroes `out`, lists the known servers' positions in `aliveScratch`; returns their count. */
  private resolveCandidates(serverKeys: readonly string[], out: Int32Array): number {
    const n = serverKeys.length;
    if (this.aliveScratch.length < n) {
      this.aliveScratch = new Int32Array(n * 2);
      this.slotScratch = new Int32Array(n * 2);
    }
    let aliveCount = 0;
    for (let a = 0; a < n; a++) {
      out[a] = 0;
      const slot = this.slotByKey.get(serverKeys[a]!);
      if (slot === undefined) continue;
      this.slotScratch[a] = slot;
      this.aliveScratch[aliveCount++] = a;
    }
    return aliveCount;
  }

  /**
   * Length of the leading run of `hashes[0..n)` held by `slot` (any server when `slot` < 0),
   * by binary search over the monotone holding predicate.
   */
  private deepestHeld(hashes: Float64Array, n: number, slot: number): number {
    let held = 0;
    let notHeld = n + 1;
    // Invariant: blocks [0, held) are held; block notHeld − 1 is not (or lies past the end).
    while (notHeld - held > 1) {
      const mid = (held + notHeld) >>> 1;
      const key = hashes[mid - 1]!;
      const found = slot < 0 ? this.firstHolder.get(key) !== NONE : this.holdsSlot(slot, key);
      if (found) held = mid;
      else notHeld = mid;
    }
    return held;
  }

  private holdsSlot(slot: number, key: number): boolean {
    const pool = this.entries_;
    let id = this.firstHolder.get(key);
    while (id !== NONE && pool.server[id] !== slot) id = pool.nextHolder[id]!;
    return id !== NONE;
  }

  private slotFor(serverKey: string): number {
    const known = this.slotByKey.get(serverKey);
    if (known !== undefined) return known;
    let slot = this.slots.indexOf(undefined);
    if (slot < 0) slot = this.slots.length;
    this.slots[slot] = { key: serverKey, capacity: this.defaultCapacity, head: NONE, tail: NONE, size: 0 };
    this.slotByKey.set(serverKey, slot);
    return slot;
  }

  /** Drops entry `id` from `server`'s LRU list and from its key's holders. */
  private evict(server: ServerSlot, id: number): void {
    const pool = this.entries_;
    pool.unlink(server, id);
    const key = pool.key[id]!;
    const first = this.firstHolder.get(key);
    if (first === id) {
      const next = pool.nextHolder[id]!;
      if (next === NONE) this.firstHolder.delete(key);
      else this.firstHolder.set(key, next);
    } else {
      let before = first;
      while (pool.nextHolder[before] !== id) before = pool.nextHolder[before]!;
      pool.nextHolder[before] = pool.nextHolder[id]!;
    }
    pool.free(id);
  }
}
