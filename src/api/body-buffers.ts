/**
 * Receive buffers for large request bodies, reused from one request to the next. A fresh
 * 800 KB buffer per request is memory outside V8's heap that V8 still counts against its
 * old-generation limit until a garbage collection frees it; when the heap itself allocates
 * little (the router keeps a long prompt as the body's bytes), V8 keeps that limit a few MB
 * above the live heap, and a full mark-compact ran every ~5 such requests (≈ 4 ms of CPU a request,
 * docs/benchmarks-router.md "800 KB prompts"). Held here, a buffer is allocated once.
 */

/** Smallest pooled capacity: bodies from 64 KiB on are read into one buffer of their size. */
const SMALLEST_BYTES = 64 * 1024;

/** Pool sizes: the largest pooled body, and the bytes kept while no request holds them. */
export interface BodyBufferLimits {
  /** Bodies larger than this get a buffer of their own, as before. */
  largestBytes: number;
  /** Idle buffers past this total are dropped (left to the garbage collector). */
  idleBytes: number;
}

const DEFAULT_LIMITS: BodyBufferLimits = { largestBytes: 2 * 1024 * 1024, idleBytes: 16 * 1024 * 1024 };

/** Free receive buffers by capacity (powers of two from 64 KiB to `largestBytes`). */
export class BodyBuffers {
  private readonly free = new Map<number, ArrayBuffer[]>();
  private idle = 0;

  constructor(private readonly limits: BodyBufferLimits = DEFAULT_LIMITS) {}

  /** Bytes held by idle buffers now. */
  get idleBytes(): number {
    return this.idle;
  }

  /** A buffer of exactly `bytes` bytes (contents undefined), pooled when `bytes` is within the limits. */
  take(bytes: number): Buffer {
    const capacity = capacityFor(bytes);
    if (capacity > this.limits.largestBytes) return Buffer.allocUnsafe(bytes);
    const reused = this.free.get(capacity)?.pop();
    if (!reused) return Buffer.allocUnsafe(capacity).subarray(0, bytes);
    this.idle -= capacity;
    return Buffer.from(reused, 0, bytes);
  }

  /**
   * Takes `buffer` (from `take`) back: the next `take` of its size class may hand it out, so the
   * caller gives it only once nothing reads it any more (`BodyLease` counts the holds on it).
   */
  give(buffer: Buffer): void {
    const space = buffer.buffer;
    if (!(space instanceof ArrayBuffer) || buffer.byteOffset !== 0 || !this.pooled(space.byteLength)) return;
    this.keep(space);
  }

  private pooled(capacity: number): boolean {
    return (
      capacity >= SMALLEST_BYTES && capacity <= this.limits.largestBytes && capacity === capacityFor(capacity)
    );
  }

  private keep(space: ArrayBuffer): void {
    const capacity = space.byteLength;
    if (this.idle + capacity > this.limits.idleBytes) return;
    let list = this.free.get(capacity);
    if (!list) {
      list = [];
      this.free.set(capacity, list);
    }
    list.push(space);
    this.idle += capacity;
  }
}

/** The power of two at or above `bytes`, at least 64 KiB. */
function capacityFor(bytes: number): number {
  return Math.max(SMALLEST_BYTES, 2 ** Math.ceil(Math.log2(bytes)));
}
