/**
 * Token ids of prompt segments (chat messages rendered by the template), least recently used
 * first out, bounded by bytes: a segment's key costs 2 bytes per code unit, its ids 4 bytes each.
 * A conversation's earlier messages are byte-identical on every turn, so they hit.
 */

/** Bytes a cached segment holds: its text (UTF-16) and its ids. */
function entryBytes(segment: string, ids: Uint32Array): number {
  return segment.length * 2 + ids.byteLength;
}

/** An LRU map from segment text to its token ids, within a byte budget. */
export class SegmentCache {
  private readonly entries = new Map<string, Uint32Array>();
  private held = 0;

  constructor(private readonly budgetBytes: number) {}

  /** Bytes held now (keys and ids). */
  get bytes(): number {
    return this.held;
  }

  /** Segments held now. */
  get size(): number {
    return this.entries.size;
  }

  /** The ids of `segment`, now the most recently used; undefined on a miss. */
  get(segment: string): Uint32Array | undefined {
    const ids = this.entries.get(segment);
    if (ids === undefined) return undefined;
    this.entries.delete(segment);
    this.entries.set(segment, ids);
    return ids;
  }

  /** Remembers `segment`'s ids, evicting the least recently used past the budget (never itself). */
  set(segment: string, ids: Uint32Array): void {
    const old = this.entries.get(segment);
    if (old !== undefined) {
      this.entries.delete(segment);
      this.held -= entryBytes(segment, old);
    }
    const bytes = entryBytes(segment, ids);
    if (bytes > this.budgetBytes) return;
    this.entries.set(segment, ids);
    this.held += bytes;
    for (const [oldest, oldIds] of this.entries) {
      if (this.held <= this.budgetBytes) break;
      this.entries.delete(oldest);
      this.held -= entryBytes(oldest, oldIds);
    }
  }
}
