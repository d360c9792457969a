/**
 * A collection for members that come and go once per request: an array whose freed slots are
 * cleared and reused, addressed by the slot `add` returned. A `Set` with that churn keeps removed
 * members reachable from its replaced hash tables, which V8 promotes, so every request's objects
 * were copied out of the young generation until the next full collection (a tenth of the young
 * generation surviving each scavenge for each such Set in the router's closed loop; see
 * docs/benchmarks-router.md, "The garbage collector's share").
 */
export class SlotList<T> {
  private readonly slots: (T | undefined)[] = [];
  private readonly free: number[] = [];
  private count = 0;

  /** Members now. */
  get size(): number {
    return this.count;
  }

  /** Adds `member`; returns its slot, valid until `remove`. */
  add(member: T): number {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = member;
    this.count++;
    return slot;
  }

  /** Removes the member in `slot` (a no-op when it is already free). */
  remove(slot: number): void {
    if (this.slots[slot] === undefined) return;
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.count--;
  }

  /** The members now, in slot order (a copy: members may be removed while it is walked). */
  members(): T[] {
    const out: T[] = [];
    for (const member of this.slots) if (member !== undefined) out.push(member);
    return out;
  }

  /** Removes every member. */
  clear(): void {
    this.slots.length = 0;
    this.free.length = 0;
    this.count = 0;
  }
}
