/**
 * Open-addressing hash table from a 53-bit block key (a non-negative integer JS number) to an
 * int32 value ≥ 0, in one typed array of (key, value) pairs, so a probe touches one cache line:
 * no allocation per lookup, insert or delete, and no boxing of keys (a `Map<number, …>` boxes
 * every key above 2^31 into a heap number). Linear probing with backward-shift deletion, so there
 * are no tombstones; grows ×2 at 50 % load. The keys are already uniformly spread hashes, so their
 * low 32 bits address the slots.
 */

const EMPTY = -1;
const MIN_SLOTS = 1024;

/** Map of block key → int32 value ≥ 0. */
export class KeyTable {
  /** Slot i holds its key at 2i and its value (EMPTY when free) at 2i + 1. */
  private pairs: Float64Array;
  private mask: number;
  private count = 0;

  /** @param expected keys expected, to size the table up front (it grows as needed). */
  constructor(expected = 0) {
    let slots = MIN_SLOTS;
    while (slots < expected * 2) slots *= 2;
    this.pairs = emptyPairs(slots);
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
      const value = pairs[2 * i + 1]!;
      if (value === EMPTY || pairs[2 * i] === key) return value;
    }
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
    for (let i = 1; i < this.pairs.length; i += 2) if (this.pairs[i] !== EMPTY) out.push(this.pairs[i]!);
    return out;
  }

  /** Sets `key` to `value` (≥ 0), adding or replacing it. */
  set(key: number, value: number): void {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const pairs = this.pairs;
    let i = (key >>> 0) & this.mask;
    while (pairs[2 * i + 1] !== EMPTY && pairs[2 * i] !== key) i = (i + 1) & this.mask;
    if (pairs[2 * i + 1] === EMPTY) this.count++;
    pairs[2 * i] = key;
    pairs[2 * i + 1] = value;
  }

  /** Removes `key` if present. */
  delete(key: number): void {
    const pairs = this.pairs;
    const mask = this.mask;
    let i = (key >>> 0) & mask;
    while (pairs[2 * i] !== key || pairs[2 * i + 1] === EMPTY) {
      if (pairs[2 * i + 1] === EMPTY) return;
      i = (i + 1) & mask;
    }
    this.count--;
    // Backward shift: an entry later in the probe run moves into the hole when the hole lies on
    // its probe path (between its home slot and where it sits), so lookups never see a gap.
    let hole = i;
    pairs[2 * hole + 1] = EMPTY;
    for (let j = (hole + 1) & mask; pairs[2 * j + 1] !== EMPTY; j = (j + 1) & mask) {
      const home = (pairs[2 * j]! >>> 0) & mask;
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        pairs[2 * hole] = pairs[2 * j]!;
        pairs[2 * hole + 1] = pairs[2 * j + 1]!;
        pairs[2 * j + 1] = EMPTY;
        hole = j;
      }
    }
  }

  private grow(): void {
    const old = this.pairs;
    const slots = (this.mask + 1) * 2;
    this.pairs = emptyPairs(slots);
    this.mask = slots - 1;
    this.count = 0;
    for (let i = 1; i < old.length; i += 2) {
      if (old[i] !== EMPTY) this.set(old[i - 1]!, old[i]!);
    }
  }
}

function emptyPairs(slots: number): Float64Array {
  const pairs = new Float64Array(slots * 2);
  for (let i = 1; i < pairs.length; i += 2) pairs[i] = EMPTY;
  return pairs;
}
