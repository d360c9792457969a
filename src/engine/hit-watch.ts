/**
 * The GPU prefix hits of one waiting sequence, kept exact while the pool changes, so that a queue
 * head retried every step resumes its prefix lookup where it stopped instead of repeating it. A
 * blocked 200K-token head would otherwise redo ~12,000 hash lookups per step until memory frees.
 *
 * The watch holds the leading blocks found for the owner's chain (`blocks[0..count)`) and how many
 * of them are unreferenced (`freeHits`). The pool reports every change that can alter either:
 * a reference taken or dropped on a watched block, and the eviction of a watched block, which ends
 * the chain there (lookups stop at the first miss). A hash registered later can only extend the
 * chain past `count`, which the resumed lookup finds by itself.
 */

/** Watched leading prefix hits of one owner (see file comment). */
export class HitWatch {
  /** Whose chain is watched (null: none). Compared by identity. */
  owner: object | null = null;
  /** Watched blocks, in chain order. */
  blocks = new Int32Array(1024);
  /** Leading chain blocks found so far. */
  count = 0;
  /** Watched blocks with no reference (each costs a free block when taken). */
  freeHits = 0;
  /** Chain position + 1 of each pool block (0 = not watched). */
  private readonly position: Int32Array;

  /** @param capacity blocks in the pool. */
  constructor(capacity: number) {
    this.position = new Int32Array(capacity);
  }

  /** True when block `b` is watched. */
  has(b: number): boolean {
    return this.position[b] !== 0;
  }

  /** Starts watching `owner`'s chain (up to `maxBlocks` long) unless it is already watched. */
  follow(owner: object, maxBlocks: number): void {
    if (maxBlocks > this.blocks.length) {
      const grown = new Int32Array(maxBlocks * 2);
      grown.set(this.blocks.subarray(0, this.count));
      this.blocks = grown;
    }
    if (this.owner === owner && this.count <= maxBlocks) return;
    this.clear();
    this.owner = owner;
  }

  /** Appends block `b` (the chain's next hit); `free`: it has no reference. */
  push(b: number, free: boolean): void {
    this.blocks[this.count++] = b;
    this.position[b] = this.count;
    if (free) this.freeHits++;
  }

  /**
   * Watched block `b` is being evicted (still unreferenced): the chain now ends before it.
   * `refs` gives the blocks' reference counts.
   */
  evicted(b: number, refs: Int32Array): void {
    const end = this.count;
    this.count = this.position[b]! - 1;
    for (let i = this.count; i < end; i++) {
      const d = this.blocks[i]!;
      this.position[d] = 0;
      if (refs[d] === 0) this.freeHits--;
    }
  }

  /** Stops watching. */
  clear(): void {
    for (let i = 0; i < this.count; i++) this.position[this.blocks[i]!] = 0;
    this.count = 0;
    this.freeHits = 0;
    this.owner = null;
  }
}
