/**
 * Binary min-heap whose nodes remember their position, so any node can be removed in O(log n)
 * (cancellation, TTL expiry). A node belongs to at most one heap at a time.
 */

/** A heap slot: the value plus its current index (-1 when not in a heap). */
export interface HeapNode<T> {
  readonly value: T;
  index: number;
}

/** Creates a detached node for `value`. */
export function heapNode<T>(value: T): HeapNode<T> {
  return { value, index: -1 };
}

/** Min-heap ordered by `less` (true when `a` must come out before `b`). */
export class IndexedHeap<T> {
  private readonly nodes: HeapNode<T>[] = [];

  constructor(private readonly less: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.nodes.length;
  }

  /** The smallest node, without removing it. */
  peek(): HeapNode<T> | undefined {
    return this.nodes[0];
  }

  push(node: HeapNode<T>): void {
    node.index = this.nodes.length;
    this.nodes.push(node);
    this.up(node.index);
  }

  /** Removes and returns the smallest node. */
  pop(): HeapNode<T> | undefined {
    const top = this.nodes[0];
    if (top) this.remove(top);
    return top;
  }

  /** Removes `node` if it is in this heap; returns whether it was. */
  remove(node: HeapNode<T>): boolean {
    const at = node.index;
    if (at < 0 || this.nodes[at] !== node) return false;
    const last = this.nodes.pop()!;
    node.index = -1;
    if (last !== node) {
      this.place(last, at);
      this.up(at);
      this.down(last.index);
    }
    return true;
  }

  /** Every node, in heap (not sorted) order. */
  values(): readonly HeapNode<T>[] {
    return this.nodes;
  }

  /** Empties the heap, detaching every node. */
  clear(): void {
    for (const node of this.nodes) node.index = -1;
    this.nodes.length = 0;
  }

  private place(node: HeapNode<T>, at: number): void {
    this.nodes[at] = node;
    node.index = at;
  }

  private up(at: number): void {
    const node = this.nodes[at]!;
    while (at > 0) {
      const parentAt = (at - 1) >> 1;
      const parent = this.nodes[parentAt]!;
      if (!this.less(node.value, parent.value)) break;
      this.place(parent, at);
      at = parentAt;
    }
    this.place(node, at);
  }

  private down(at: number): void {
    const count = this.nodes.length;
    const node = this.nodes[at]!;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= count) break;
      const right = child + 1;
      if (right < count && this.less(this.nodes[right]!.value, this.nodes[child]!.value)) child = right;
      const smaller = this.nodes[child]!;
      if (!this.less(smaller.value, node.value)) break;
      this.place(smaller, at);
      at = child;
    }
    this.place(node, at);
  }
}
