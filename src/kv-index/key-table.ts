/**
 * Open-addressing hash table from a 53-bit block key (a non-negative integer JS number) to an
 * int32 value ≥ 0, in typed arrays: no allocation per lookup, insert or delete, and no boxing of
 * keys (a `Map<number, …>` boxes every key above 2^31 into a heap number). Linear probing with
 * backward-shift deletion, so there are no tombstones; grows ×2 at 50 % load.
 * The keys are already uniformly spread hashes, so their low 32 bits address the slots.
 */

const EMPTY = -1;
const MIN_SLOTS = 1024;

/** Map of block key → int32 value ≥ 0. */
export class KeyTable {
  private keys: Float64Array;
  private values: Int32Array;
  private mask: number;
  private count = 0;

  /** @param expected keys expected, to size the table up front (it grows as needed). */
  constructor(expected = 0) {
    let slots = MIN_SLOTS;
    while (slots < expected * 2) slots *= 2;
    this.keys = new Float64Array(slots);
    this.values = new Int32Array(slots).fill(EMPTY);
    this.mask = slots - 1;
  }

  /** Number of keys held. */
  get size(): number {
    return this.count;
  }

  /** Value of `key`, or -1 when absent. */
  get(key: number): number {
    const keys = this.keys;
    const values = this.values;
    for (let i = (key >>> 0) & this.mask; ; i = (i + 1) & this.mask) {
      const value = values[i]!;
      if (value === EMPTY || keys[i] === key) return value;
    }
  }

  /** Sets `key` to `value` (≥ 0), adding or replacing it. */
  set(key: number, value: number): void {
    if ((this.count + 1) * 2 > this.values.length) this.grow();
    const keys = this.keys;
    const values = this.values;
    let i = (key >>> 0) & this.mask;
    while (values[i] !== EMPTY && keys[i] !== key) i = (i + 1) & this.mask;
    if (values[i] === EMPTY) this.count++;
    keys[i] = key;
    values[i] = value;
  }

  /** Removes `key` if present. */
  delete(key: number): void {
    const keys = this.keys;
    const values = this.values;
    const mask = this.mask;
    let i = (key >>> 0) & mask;
    while (keys[i] !== key || values[i] === EMPTY) {
      if (values[i] === EMPTY) return;
      i = (i + 1) & mask;
    }
    this.count--;
    // Backward shift: an entry later in the probe run moves into the hole when the hole lies on
    // its probe path (between its home slot and where it sits), so lookups never see a gap.
    let hole = i;
    values[hole] = EMPTY;
    for (let j = (hole + 1) & mask; values[j] !== EMPTY; j = (j + 1) & mask) {
      const home = (keys[j]! >>> 0) & mask;
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        keys[hole] = keys[j]!;
        values[hole] = values[j]!;
        values[j] = EMPTY;
        hole = j;
      }
    }
  }

  private grow(): void {
    const oldKeys = this.keys;
    const oldValues = this.values;
    this.keys = new Float64Array(oldKeys.length * 2);
    this.values = new Int32Array(oldValues.length * 2).fill(EMPTY);
    this.mask = this.keys.length - 1;
    this.count = 0;
    for (let i = 0; i < oldValues.length; i++) {
      if (oldValues[i] !== EMPTY) this.set(oldKeys[i]!, oldValues[i]!);
    }
  }
}
