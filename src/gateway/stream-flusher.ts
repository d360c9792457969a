/**
 * One shared timer that flushes coalesced streams: a stream with chunks waiting asks for the next
 * flush, and every waiting stream is flushed together once per `intervalMs`. A stream that gets one
 * token per engine step then costs the router one socket write (and the client one HTTP chunk) per
 * interval instead of one per token. Streams keep their own pending bytes (src/gateway/forward.ts).
 */

/** A stream with chunks waiting to be written. */
export interface Flushable {
  flush(): void;
}

/** Flushes every scheduled stream once per interval; armed only while one waits. */
export class StreamFlusher {
  private readonly waiting = new Set<Flushable>();
  private timer: NodeJS.Timeout | undefined;

  /** @param intervalMs flush period in ms (> 0). */
  constructor(private readonly intervalMs: number) {}

  /** `stream` is flushed at the next tick (once, however often it asks). */
  schedule(stream: Flushable): void {
    this.waiting.add(stream);
    this.timer ??= setTimeout(this.flushAll, this.intervalMs);
  }

  /** `stream` ended or flushed itself: no flush for it at the next tick. */
  cancel(stream: Flushable): void {
    if (!this.waiting.delete(stream) || this.waiting.size > 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readonly flushAll = (): void => {
    this.timer = undefined;
    const streams = [...this.waiting];
    this.waiting.clear();
    for (const stream of streams) stream.flush();
  };
}

/**
 * The flusher for the gateway's `streamFlushMs`: none for undefined or 0. Throws a TypeError for
 * anything but a finite number ≥ 0 (a mistyped flag must not silently turn coalescing off).
 */
export function streamFlusherFor(intervalMs: number | undefined): StreamFlusher | undefined {
  if (intervalMs === undefined || intervalMs === 0) return undefined;
  if (!Number.isFinite(intervalMs) || intervalMs < 0) {
    throw new TypeError(`streamFlushMs must be a number of ms >= 0, got ${intervalMs}`);
  }
  return new StreamFlusher(intervalMs);
}
