/**
 * One shared timer that flushes coalesced streams: a stream with chunks waiting asks for the next
 * flush, and every waiting stream is flushed together once per `intervalMs`. A stream that gets one
 * token per engine step then costs the router one socket write (and the client one HTTP chunk) per
 * interval instead of one per token. With `intervalMs` 0 (the default) a stream read through the
 * router's HTTP/1.1 client needs no flusher (it writes each upstream read's chunks at the read's
 * end, src/gateway/forward.ts); one read through undici, which does not tell a read's end, is
 * flushed once the event loop has handled every socket that was readable (`setImmediate`), so
 * its chunks that arrived together go out as one write and none waits for a timer.
 */

/** A stream with chunks waiting to be written. */
export interface Flushable {
  flush(): void;
}

/** Flushes every scheduled stream once per interval; armed only while one waits. */
export class StreamFlusher {
  private readonly waiting = new Set<Flushable>();
  private timer: NodeJS.Timeout | undefined;

  private immediate: NodeJS.Immediate | undefined;

  /** @param intervalMs flush period in ms (≥ 0; 0 = after the current event-loop turn's I/O). */
  constructor(readonly intervalMs: number) {}

  /** `stream` is flushed at the next tick (once, however often it asks). */
  schedule(stream: Flushable): void {
    this.waiting.add(stream);
    if (this.intervalMs === 0) this.immediate ??= setImmediate(this.flushAll);
    else this.timer ??= setTimeout(this.flushAll, this.intervalMs);
  }

  /** `stream` ended or flushed itself: no flush for it at the next tick. */
  cancel(stream: Flushable): void {
    if (!this.waiting.delete(stream) || this.waiting.size > 0) return;
    clearTimeout(this.timer);
    clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
  }

  private readonly flushAll = (): void => {
    this.timer = undefined;
    this.immediate = undefined;
    const streams = [...this.waiting];
    this.waiting.clear();
    for (const stream of streams) stream.flush();
  };
}

/**
 * The flusher for the gateway's `streamFlushMs` (undefined = 0: chunks that arrive together are
 * written together). Throws a TypeError for anything but a finite number ≥ 0 (a mistyped flag must
 * not silently change coalescing).
 */
export function streamFlusherFor(intervalMs: number | undefined): StreamFlusher {
  const ms = intervalMs ?? 0;
  if (!Number.isFinite(ms) || ms < 0) {
    throw new TypeError(`streamFlushMs must be a number of ms >= 0, got ${intervalMs}`);
  }
  return new StreamFlusher(ms);
}
