/**
 * Binary min-heap over plain values, ordered by `less` (true when `a` must come out before `b`).
 * No per-entry allocation; for removal of arbitrary entries see flow-control's IndexedHeap.
 */
export class MinHeap<T> implements Iterable<T> {
  private readonly items: T[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  /** The smallest entry, without removing it. */
  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const items = this.items;
    let i = items.length;
    items.push(item);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(item, items[parent]!)) break;
      items[i] = items[parent]!;
      i = parent;
    }
    items[i] = item;
  }

  /** Removes and returns the smallest entry. */
  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    const n = items.length;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && this.less(items[child + 1]!, items[child]!)) child++;
      if (!this.less(items[child]!, last)) break;
      items[i] = items[child]!;
      i = child;
    }
    items[i] = last;
    return top;
  }

  /** Entries in heap (not sorted) order. */
  [Symbol.iterator](): Iterator<T> {
    return this.items[Symbol.iterator]();
  }
}
