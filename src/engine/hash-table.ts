/**
 * Block hash → block index, for the prefix cache's hot path. Open addressing with linear probing over
 * typed arrays (no per-entry allocation, unlike a Map keyed by non-Smi doubles, which boxes every key)
 * and backward-shift deletion, so there are no tombstones and probes stay short under constant churn.
 * Keys are the non-negative 53-bit integers of block-hash.ts; −1 marks an empty slot.
 */

const EMPTY = -1;
const TWO_32 = 4294967296;

/** Fixed-capacity map from block hash (non-negative integer < 2^53) to a block index (≥ 0). */
export class BlockHashTable {
  private readonly keys: Float64Array;
  private readonly values: Int32Array;
  private readonly mask: number;
  private count = 0;

  /** `maxEntries`: the most keys ever held at once (the pool's block count); the load stays ≤ 0.5. */
  constructor(maxEntries: number) {
    let slots = 16;
    while (slots < maxEntries * 2) slots *= 2;
    this.keys = new Float64Array(slots).fill(EMPTY);
    this.values = new Int32Array(slots);
    this.mask = slots - 1;
  }

  /** Keys held. */
  get size(): number {
    return this.count;
  }

  /** Block index stored under `key`, or −1. */
  get(key: number): number {
    const keys = this.keys;
    for (let i = this.slotOf(key); ; i = (i + 1) & this.mask) {
      const k = keys[i]!;
      if (k === key) return this.values[i]!;
      if (k === EMPTY) return EMPTY;
    }
  }

  /** Stores `key → value` unless `key` is present; returns whether it was stored. */
  insertIfAbsent(key: number, value: number): boolean {
    const keys = this.keys;
    let i = this.slotOf(key);
    for (; keys[i] !== EMPTY; i = (i + 1) & this.mask) if (keys[i] === key) return false;
    keys[i] = key;
    this.values[i] = value;
    this.count++;
    return true;
  }

  /** Removes `key` if present, shifting later members of its probe run back into the hole. */
  delete(key: number): void {
    const keys = this.keys;
    const mask = this.mask;
    let hole = this.slotOf(key);
    while (keys[hole] !== key) {
      if (keys[hole] === EMPTY) return;
      hole = (hole + 1) & mask;
    }
    for (let i = (hole + 1) & mask; keys[i] !== EMPTY; i = (i + 1) & mask) {
      const home = this.slotOf(keys[i]!);
      // Move i into the hole unless its home lies cyclically in (hole, i]: then it is already reachable.
      const reachable = hole <= i ? hole < home && home <= i : hole < home || home <= i;
      if (reachable) continue;
      keys[hole] = keys[i]!;
      this.values[hole] = this.values[i]!;
      hole = i;
    }
    keys[hole] = EMPTY;
    this.count--;
  }

  /** Calls `fn` with every stored value. */
  forEachValue(fn: (value: number) => void): void {
    for (let i = 0; i < this.keys.length; i++) if (this.keys[i] !== EMPTY) fn(this.values[i]!);
  }

  /** Removes every key. */
  clear(): void {
    this.keys.fill(EMPTY);
    this.count = 0;
  }

  private slotOf(key: number): number {
    // Both 32-bit halves of block-hash.ts's output are already mixed; folding them is enough.
    return (key ^ Math.floor(key / TWO_32)) & this.mask;
  }
}
