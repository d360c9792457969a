/**
 * A growable set of integer keys in [0, 2^40), for the ideal cache's tens of millions of segment
 * identities: open addressing with linear probing over one Uint32Array of (low 32 bits, high bits
 * + 1) pairs, so a probe touches one cache line, a member costs 16–32 bytes at a load of at most
 * one half, and nothing is allocated per insert (a `Set` allocates and rehashes as it grows, and
 * its entries are traced by the GC). Keys are expected to be well-mixed hashes. No deletion.
 */

const TWO_32 = 4294967296;
const MIN_SLOTS = 1 << 16;

/** Set of integers in [0, 2^40). */
export class KeySet {
  /** Slot i: low word at 2i, high word + 1 at 2i + 1 (0 = empty slot). */
  private pairs = new Uint32Array(MIN_SLOTS * 2);
  private mask = MIN_SLOTS - 1;
  private count = 0;

  /** Members held. */
  get size(): number {
    return this.count;
  }

  /** Adds `key`; returns false when it was already a member. */
  add(key: number): boolean {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    return this.place(key >>> 0, Math.floor(key / TWO_32) + 1);
  }

  private place(low: number, high: number): boolean {
    const pairs = this.pairs;
    let i = this.home(low, high);
    for (; pairs[2 * i + 1] !== 0; i = (i + 1) & this.mask) {
      if (pairs[2 * i + 1] === high && pairs[2 * i] === low) return false;
    }
    pairs[2 * i] = low;
    pairs[2 * i + 1] = high;
    this.count++;
    return true;
  }

  private home(low: number, high: number): number {
    return (Math.imul(low ^ Math.imul(high, 0x85ebca6b), 0x9e3779b1) >>> 0) & this.mask;
  }

  private grow(): void {
    const old = this.pairs;
    const slots = (this.mask + 1) * 2;
    this.pairs = new Uint32Array(slots * 2);
    this.mask = slots - 1;
    this.count = 0;
    for (let i = 0; i < old.length; i += 2) if (old[i + 1] !== 0) this.place(old[i]!, old[i + 1]!);
  }
}
