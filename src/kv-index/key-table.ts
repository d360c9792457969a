/**
 * Open-addressing hash table from a 53-bit block key (a non-negative integer JS number) to an
 * int32 value ≥ 0, in one typed array of (key, value + 1) pairs, so a probe touches one cache line:
 * no allocation per lookup, insert or delete, and no boxing of keys (a `Map<number, …>` boxes
 * every key above 2^31 into a heap number). Linear probing with backward-shift deletion, so there
 * are no tombstones; the keys are already uniformly spread hashes, so their low 32 bits address
 * the slots. Stored values are offset by one so that a fresh (zeroed) array is an empty table.
 *
 * At 50 % load the table doubles without a pause: the new array starts empty (the OS zeroes its
 * pages lazily) and each later `set` or `delete` moves the entries of a few old slots into it, so
 * the old table is drained before the new one fills; meanwhile a lookup tries the new table, then
 * the old. A moved entry leaves its key behind as a tombstone in the old table, which keeps the old
 * probe runs intact and never answers.
 */

const FREE = 0;
const MOVED = -1;
const MIN_SLOTS = 1024;
/** Old slots drained per write: ≥ 2 drains the old table (≤ 50 % full) before the new one is. */
const DRAIN_SLOTS = 8;

/** Map of block key → int32 value ≥ 0. */
export class KeyTable {
  /** Slot i holds its key at 2i and its value + 1 (FREE when free) at 2i + 1. */
  private pairs: Float64Array;
  private mask: number;
  /** Occupied slots of `pairs`. */
  private used = 0;
  /** The table being drained since the last doubling, with its mask and the next slot to move. */
  private old: Float64Array | null = null;
  private oldMask = 0;
  private cursor = 0;
  private count = 0;

  /** @param expected keys expected, to size the table up front (it grows as needed). */
  constructor(expected = 0) {
    let slots = MIN_SLOTS;
    while (slots < expected * 2) slots *= 2;
    this.pairs = new Float64Array(slots * 2);
    this.mask = slots - 1;
  }

  /** Number of keys held. */
  get size(): number {
    return this.count;
  }

  /** Value of `key`, or -1 when absent. */
  get(key: number): number {
    const pairs = this.pairs;
    for (let i = (key >>> 0) & this.mask; ; i = (i + 1) & this.mask) {
      const stored = pairs[2 * i + 1]!;
      if (stored === FREE) break;
      if (pairs[2 * i] === key) return stored - 1;
    }
    const slot = this.old === null ? -1 : this.oldSlot(key);
    return slot < 0 ? -1 : this.old![2 * slot + 1]! - 1;
  }

  /**
   * Reads the home slot of each of `keys[0..count)` and returns a checksum of no meaning. The
   * loads are independent, so the CPU overlaps their cache misses (≈ 10 at a time) instead of
   * paying them one by one in a later loop whose lookups depend on branches: a software
   * prefetch for a batch of lookups into a table much larger than the cache.
   */
  warm(keys: Float64Array, count: number): number {
    const pairs = this.pairs;
    const mask = this.mask;
    let checksum = 0;
    for (let i = 0; i < count; i++) checksum += pairs[2 * ((keys[i]! >>> 0) & mask) + 1]!;
    return checksum;
  }

  /** Every value held, in no particular order. */
  values(): number[] {
    const out: number[] = [];
    for (const pairs of this.old === null ? [this.pairs] : [this.pairs, this.old])
      for (let i = 1; i < pairs.length; i += 2) if (pairs[i]! > 0) out.push(pairs[i]! - 1);
    return out;
  }

  /** Sets `key` to `value` (≥ 0), adding or replacing it. */
  set(key: number, value: number): void {
    this.drain(DRAIN_SLOTS);
    let added = true;
    if (this.old !== null) {
      const slot = this.oldSlot(key);
      if (slot >= 0) {
        this.old[2 * slot + 1] = MOVED;
        added = false;
      }
    }
    if (this.place(key, value + 1) && added) this.count++;
    if (this.used * 2 > this.mask + 1) this.double();
  }

  /** Removes `key` if present. */
  delete(key: number): void {
    this.drain(DRAIN_SLOTS);
    const pairs = this.pairs;
    const mask = this.mask;
    let i = (key >>> 0) & mask;
    while (pairs[2 * i + 1] !== FREE && pairs[2 * i] !== key) i = (i + 1) & mask;
    if (pairs[2 * i + 1] === FREE) {
      const slot = this.old === null ? -1 : this.oldSlot(key);
      if (slot >= 0) {
        this.old![2 * slot + 1] = MOVED;
        this.count--;
      }
      return;
    }
    this.count--;
    this.used--;
    // Backward shift: an entry later in the probe run moves into the hole when the hole lies on
    // its probe path (between its home slot and where it sits), so lookups never see a gap.
    let hole = i;
    pairs[2 * hole + 1] = FREE;
    for (let j = (hole + 1) & mask; pairs[2 * j + 1] !== FREE; j = (j + 1) & mask) {
      const home = (pairs[2 * j]! >>> 0) & mask;
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        pairs[2 * hole] = pairs[2 * j]!;
        pairs[2 * hole + 1] = pairs[2 * j + 1]!;
        pairs[2 * j + 1] = FREE;
        hole = j;
      }
    }
  }

  /** Writes (key, stored) into the current table; true when the key was not there. */
  private place(key: number, stored: number): boolean {
    const pairs = this.pairs;
    let i = (key >>> 0) & this.mask;
    while (pairs[2 * i + 1] !== FREE && pairs[2 * i] !== key) i = (i + 1) & this.mask;
    const fresh = pairs[2 * i + 1] === FREE;
    if (fresh) this.used++;
    pairs[2 * i] = key;
    pairs[2 * i + 1] = stored;
    return fresh;
  }

  /** Slot of `key`'s live entry in the old table, or -1. */
  private oldSlot(key: number): number {
    const old = this.old!;
    for (let i = (key >>> 0) & this.oldMask; ; i = (i + 1) & this.oldMask) {
      const stored = old[2 * i + 1]!;
      if (stored === FREE) return -1;
      if (old[2 * i] === key) return stored > 0 ? i : -1;
    }
  }

  /** Moves the live entries of up to `slots` old slots into the current table. */
  private drain(slots: number): void {
    const old = this.old;
    if (old === null) return;
    const end = Math.min(this.cursor + slots, this.oldMask + 1);
    for (let i = this.cursor; i < end; i++) {
      const stored = old[2 * i + 1]!;
      if (stored <= 0) continue;
      this.place(old[2 * i]!, stored);
      old[2 * i + 1] = MOVED;
    }
    this.cursor = end;
    if (end > this.oldMask) this.old = null;
  }

  private double(): void {
    if (this.old !== null) this.drain(this.oldMask + 1);
    this.old = this.pairs;
    this.oldMask = this.mask;
    this.cursor = 0;
    const slots = (this.mask + 1) * 2;
    this.pairs = new Float64Array(slots * 2);
    this.mask = slots - 1;
    this.used = 0;
  }
}
