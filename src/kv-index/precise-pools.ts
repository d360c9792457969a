/**
 * The precise index's records as parallel typed arrays indexed by id, as the approximate index's
 * `EntryPool`: no object per holder, engine block or key, so millions of them cost tens of bytes
 * each and nothing for the garbage collector to trace. Freed ids return to a free list; a holder's
 * generation grows when it is freed, so a stale reference (an engine block's ownership edge, a
 * speculative entry queued for expiry) can tell it no longer points at the holder it meant.
 */

/** No record: list ends and empty lists. */
export const NONE = -1;

const INITIAL = 1024;

function grown<T extends Int32Array | Uint32Array | Float64Array>(old: T, size: number): T {
  const next = new (old.constructor as new (n: number) => T)(size);
  next.set(old as never);
  return next;
}

/** Ids with a free list; `grow` resizes the subclass's columns. */
abstract class Pool {
  protected size = INITIAL;
  private used = 0;
  private freeHead = NONE;
  /** Free-list links (reused as each subclass's own `next` column). */
  next = new Int32Array(INITIAL);

  protected take(): number {
    let id = this.freeHead;
    if (id !== NONE) this.freeHead = this.next[id]!;
    else {
      if (this.used === this.size) {
        this.size *= 2;
        this.next = grown(this.next, this.size);
        this.grow(this.size);
      }
      id = this.used++;
    }
    this.next[id] = NONE;
    return id;
  }

  /** Returns `id` to the pool (unlinked from every list first). */
  release(id: number): void {
    this.next[id] = this.freeHead;
    this.freeHead = id;
  }

  /** Makes room for `capacity` records, so the columns double only past it. */
  reserve(capacity: number): void {
    if (capacity <= this.size) return;
    while (this.size < capacity) this.size *= 2;
    this.next = grown(this.next, this.size);
    this.grow(this.size);
  }

  protected abstract grow(size: number): void;
}

/** One pod holding one request key, in its key's singly linked list (`next`). */
export class HolderPool extends Pool {
  /** The key's slot in `KeySlotPool`. */
  slot = new Int32Array(INITIAL);
  /** Pod id, NONE once freed. */
  pod = new Int32Array(INITIAL);
  /** Bit per tier holding it (0: speculative or gone). */
  tiers = new Int32Array(INITIAL);
  /** Speculative until this time, ms (meaningful while `tiers` is 0). */
  specUntil = new Float64Array(INITIAL);
  generation = new Int32Array(INITIAL);

  alloc(slot: number, pod: number): number {
    const id = this.take();
    this.slot[id] = slot;
    this.pod[id] = pod;
    this.tiers[id] = 0;
    this.specUntil[id] = 0;
    return id;
  }

  override release(id: number): void {
    this.pod[id] = NONE;
    this.generation[id]!++;
    super.release(id);
  }

  protected grow(size: number): void {
    this.slot = grown(this.slot, size);
    this.pod = grown(this.pod, size);
    this.tiers = grown(this.tiers, size);
    this.specUntil = grown(this.specUntil, size);
    this.generation = grown(this.generation, size);
  }
}

/** An engine block's claim on a holder it completes, in the block's list (`next`). */
export class EdgePool extends Pool {
  holder = new Int32Array(INITIAL);
  /** The holder's generation when the edge was made. */
  generation = new Int32Array(INITIAL);

  alloc(holder: number, generation: number, next: number): number {
    const id = this.take();
    this.holder[id] = holder;
    this.generation[id] = generation;
    this.next[id] = next;
    return id;
  }

  protected grow(size: number): void {
    this.holder = grown(this.holder, size);
    this.generation = grown(this.generation, size);
  }
}

/**
 * Engine blocks' tails in one token array: a tail is a run of its length, and a freed run is reused
 * by the next tail of the same length (tails are shorter than a request block, and engines use one
 * block size, so there are a few lengths: 16, 32 and 48 tokens for 16-token engine blocks under
 * 64-token request blocks).
 */
export class TailTokens {
  tokens = new Uint32Array(INITIAL * 16);
  private end = 0;
  /** Per length: the first free run of that length (its first token links the next), else NONE. */
  private freeByLength = new Int32Array(64).fill(NONE);

  /** Offset of a run of `length` (> 0) tokens. */
  alloc(length: number): number {
    if (length >= this.freeByLength.length) {
      const heads = new Int32Array(length * 2).fill(NONE);
      heads.set(this.freeByLength);
      this.freeByLength = heads;
    }
    const free = this.freeByLength[length]!;
    if (free !== NONE) {
      this.freeByLength[length] = this.tokens[free]! | 0;
      return free;
    }
    if (this.end + length > this.tokens.length)
      this.tokens = grown(this.tokens, Math.max(this.tokens.length * 2, this.end + length));
    const at = this.end;
    this.end += length;
    return at;
  }

  /** Returns the run at `at` of `length` tokens. */
  release(at: number, length: number): void {
    this.tokens[at] = this.freeByLength[length]!;
    this.freeByLength[length] = at;
  }
}

/** One engine block of one pod, in the index's global LRU (`prev` older, `next` newer). */
export class EngineBlockPool extends Pool {
  pod = new Int32Array(INITIAL);
  engineKey = new Float64Array(INITIAL);
  tiers = new Int32Array(INITIAL);
  /** Request-key chain at the last full request block ending in or before this block. */
  chainHi = new Uint32Array(INITIAL);
  chainLo = new Uint32Array(INITIAL);
  /** First edge to the holders of the request blocks that end inside this block. */
  firstEdge = new Int32Array(INITIAL);
  bytes = new Int32Array(INITIAL);
  prev = new Int32Array(INITIAL);
  /**
   * Tokens after the chain's request block, up to this block's end (only where block sizes
   * differ): `tailLength` tokens of `tail.tokens` from `tailAt`.
   */
  tailAt = new Int32Array(INITIAL);
  tailLength = new Int32Array(INITIAL);
  readonly tail = new TailTokens();

  alloc(pod: number, engineKey: number, tiers: number): number {
    const id = this.take();
    this.pod[id] = pod;
    this.engineKey[id] = engineKey;
    this.tiers[id] = tiers;
    this.firstEdge[id] = NONE;
    this.prev[id] = NONE;
    this.tailLength[id] = 0;
    return id;
  }

  /** Gives block `id` the tail `tokens[from, from + length)` (length > 0). */
  setTail(id: number, tokens: ArrayLike<number>, from: number, length: number): void {
    const at = this.tail.alloc(length);
    const run = this.tail.tokens;
    for (let t = 0; t < length; t++) run[at + t] = tokens[from + t]!;
    this.tailAt[id] = at;
    this.tailLength[id] = length;
  }

  override release(id: number): void {
    const length = this.tailLength[id]!;
    if (length > 0) this.tail.release(this.tailAt[id]!, length);
    this.tailLength[id] = 0;
    super.release(id);
  }

  protected grow(size: number): void {
    this.pod = grown(this.pod, size);
    this.engineKey = grown(this.engineKey, size);
    this.tiers = grown(this.tiers, size);
    this.chainHi = grown(this.chainHi, size);
    this.chainLo = grown(this.chainLo, size);
    this.firstEdge = grown(this.firstEdge, size);
    this.bytes = grown(this.bytes, size);
    this.prev = grown(this.prev, size);
    this.tailAt = grown(this.tailAt, size);
    this.tailLength = grown(this.tailLength, size);
  }
}

/** Per request key: its holders' list head, its 64-bit value and how it was derived. */
export class KeySlotPool extends Pool {
  /** The request key, folded. */
  key = new Float64Array(INITIAL);
  firstHolder = new Int32Array(INITIAL);
  hi = new Uint32Array(INITIAL);
  lo = new Uint32Array(INITIAL);
  /** The parent key, folded. */
  parent = new Float64Array(INITIAL);
  /** `blockDerivation` digest, or NONE when not known (a key only a decision inserted). */
  derivation = new Float64Array(INITIAL);

  alloc(key: number): number {
    const id = this.take();
    this.key[id] = key;
    this.firstHolder[id] = NONE;
    this.derivation[id] = NONE;
    return id;
  }

  /** A freed slot holds no key (NONE), so a slot remembered elsewhere can tell it was freed. */
  override release(id: number): void {
    this.key[id] = NONE;
    super.release(id);
  }

  protected grow(size: number): void {
    this.key = grown(this.key, size);
    this.firstHolder = grown(this.firstHolder, size);
    this.hi = grown(this.hi, size);
    this.lo = grown(this.lo, size);
    this.parent = grown(this.parent, size);
    this.derivation = grown(this.derivation, size);
  }
}

/**
 * Speculative holders in expiry order: (holder, its generation then, expiry ms), a ring of typed
 * columns that doubles when full, so a push or a shift never moves the entries queued (a doubling
 * copies them once, in order, into columns twice the size).
 */
export class ExpiryQueue {
  private holders = new Int32Array(INITIAL);
  private generations = new Int32Array(INITIAL);
  private untils = new Float64Array(INITIAL);
  private head = 0;
  private count = 0;

  /** Entries queued. */
  get length(): number {
    return this.count;
  }

  /** Makes room for `capacity` entries, so the ring doubles only past it. */
  reserve(capacity: number): void {
    let size = this.holders.length;
    while (size < capacity) size *= 2;
    if (size > this.holders.length) this.resize(size);
  }

  push(holder: number, generation: number, until: number): void {
    if (this.count === this.holders.length) this.resize(this.count * 2);
    const at = (this.head + this.count) & (this.holders.length - 1);
    this.holders[at] = holder;
    this.generations[at] = generation;
    this.untils[at] = until;
    this.count++;
  }

  /** Drops the entry at the head. */
  shift(): void {
    this.head = (this.head + 1) & (this.holders.length - 1);
    this.count--;
  }

  /** The holder of the `i`-th entry from the head (0: the next due). */
  holder(i: number): number {
    return this.holders[(this.head + i) & (this.holders.length - 1)]!;
  }

  generation(i: number): number {
    return this.generations[(this.head + i) & (this.holders.length - 1)]!;
  }

  until(i: number): number {
    return this.untils[(this.head + i) & (this.holders.length - 1)]!;
  }

  /** Moves the entries, in order from the head, into columns of `size` (a power of two ≥ the old). */
  private resize(size: number): void {
    const old = this.holders.length;
    const unwrap = <T extends Int32Array | Float64Array>(column: T): T => {
      const next = new (column.constructor as new (n: number) => T)(size);
      next.set(column.subarray(this.head) as never);
      next.set(column.subarray(0, this.head) as never, old - this.head);
      return next;
    };
    this.holders = unwrap(this.holders);
    this.generations = unwrap(this.generations);
    this.untils = unwrap(this.untils);
    this.head = 0;
  }
}
