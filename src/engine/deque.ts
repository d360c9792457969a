/** A growable ring-buffer deque: O(1) push/shift at the tail/head and unshift at the head. */
export class Deque<T> {
  private items: (T | undefined)[] = new Array(16);
  private head = 0;
  /** Number of items. */
  length = 0;

  /** Appends at the tail. */
  push(item: T): void {
    this.growIfFull();
    this.items[(this.head + this.length) & (this.items.length - 1)] = item;
    this.length++;
  }

  /** Prepends at the head. */
  unshift(item: T): void {
    this.growIfFull();
    this.head = (this.head - 1) & (this.items.length - 1);
    this.items[this.head] = item;
    this.length++;
  }

  /** Head item, or undefined when empty. */
  peek(): T | undefined {
    return this.length === 0 ? undefined : this.items[this.head];
  }

  /** Removes and returns the head item. */
  shift(): T | undefined {
    if (this.length === 0) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined;
    this.head = (this.head + 1) & (this.items.length - 1);
    this.length--;
    return item;
  }

  /** Items head to tail (allocates; for diagnostics and stats). */
  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.length; i++) yield this.items[(this.head + i) & (this.items.length - 1)]!;
  }

  private growIfFull(): void {
    if (this.length < this.items.length) return;
    const bigger: (T | undefined)[] = new Array(this.items.length * 2);
    for (let i = 0; i < this.length; i++) bigger[i] = this.items[(this.head + i) & (this.items.length - 1)];
    this.items = bigger;
    this.head = 0;
  }
}
