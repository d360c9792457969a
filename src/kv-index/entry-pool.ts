/**
 * The prefix index's (block key, server) entries as parallel typed arrays indexed by entry id:
 * no object per entry, so holding millions of entries costs 24 bytes each and nothing for the GC to trace.
 * Each entry sits in two intrusive linked lists: its server's LRU list (doubly linked) and the
 * list of entries holding the same key (singly linked, as short as the number of servers).
 */

/** No entry: list ends and empty lists. */
export const NONE = -1;

const INITIAL_ENTRIES = 4096;

/** A server's LRU list of entries: `head` least recent, `tail` most recent. */
export interface LruList {
  head: number;
  tail: number;
  size: number;
}

/** Growable pool of entries with a free list; ids stay valid until freed. */
export class EntryPool {
  key = new Float64Array(INITIAL_ENTRIES);
  server = new Int32Array(INITIAL_ENTRIES);
  /** Next entry holding the same key, or NONE. */
  nextHolder = new Int32Array(INITIAL_ENTRIES);
  private prev = new Int32Array(INITIAL_ENTRIES);
  private next = new Int32Array(INITIAL_ENTRIES);
  private used = 0;
  private freeHead = NONE;

  /** A new entry for (`key`, `server`), in no list yet. */
  alloc(key: number, server: number): number {
    let id = this.freeHead;
    if (id !== NONE) this.freeHead = this.next[id]!;
    else {
      if (this.used === this.key.length) this.grow();
      id = this.used++;
    }
    this.key[id] = key;
    this.server[id] = server;
    this.nextHolder[id] = NONE;
    return id;
  }

  /** Returns an entry (already unlinked from both lists) to the pool. */
  free(id: number): void {
    this.next[id] = this.freeHead;
    this.freeHead = id;
  }

  /** Appends `id` as the most recent entry of `list`. */
  append(list: LruList, id: number): void {
    this.prev[id] = list.tail;
    this.next[id] = NONE;
    if (list.tail === NONE) list.head = id;
    else this.next[list.tail] = id;
    list.tail = id;
    list.size++;
  }

  /** Removes `id` from `list`. */
  unlink(list: LruList, id: number): void {
    const before = this.prev[id]!;
    const after = this.next[id]!;
    if (before === NONE) list.head = after;
    else this.next[before] = after;
    if (after === NONE) list.tail = before;
    else this.prev[after] = before;
    list.size--;
  }

  /** The entry after `id` in its LRU list (towards the most recent), or NONE. */
  newer(id: number): number {
    return this.next[id]!;
  }

  private grow(): void {
    const size = this.key.length * 2;
    this.key = copyInto(new Float64Array(size), this.key);
    this.server = copyInto(new Int32Array(size), this.server);
    this.nextHolder = copyInto(new Int32Array(size), this.nextHolder);
    this.prev = copyInto(new Int32Array(size), this.prev);
    this.next = copyInto(new Int32Array(size), this.next);
  }
}

function copyInto<T extends Float64Array | Int32Array>(target: T, source: T): T {
  target.set(source as never);
  return target;
}
