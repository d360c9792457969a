/**
 * A conversation's token ids in one array that grows by appending. The ids below `length` never
 * change once written, so every prompt handed out as a view of the array (`view`) stays valid
 * while the conversation's next turns are written after it: a turn costs its new ids, not a copy
 * of the whole conversation. A turn that does not continue where the array ends (a fork, an edit
 * of an earlier message) or does not fit in it gets a new array with the shared prefix copied
 * (`copyOf`). The arrays are shared memory, so the tokenizer's worker thread can build that new
 * array, the shared prefix and the turn's ids in it, off the event loop (`buildIds`, `adopt`).
 */

/**
 * The buffers of `ConversationIds` arrays, whose written ids are immutable (see `isAppendOnly`),
 * each with the array it copied its first ids from, if any (see `copiedFrom`).
 */
const appendOnly = new WeakMap<ArrayBufferLike, CopiedPrefix | null>();

/** The first `length` ids of an array are those of `source`'s buffer (weakly held: it may be gone). */
export interface CopiedPrefix {
  readonly source: WeakRef<ArrayBufferLike>;
  readonly length: number;
}

/** Room left after the ids a new array is made for: an eighth of them, at least 256 ids. */
function withRoom(ids: number): number {
  return ids + Math.max(256, ids >>> 3);
}

/** Buffers from this size on come from a spare made ahead (a 200K-token conversation's is ≈ 1 MB). */
const SPARE_FROM_BYTES = 256 * 1024;

/**
 * A buffer made after the last large one was taken, its pages already touched: a fresh 1 MB buffer
 * costs its first writer ≈ 0.3 ms of page faults, which the spare's refill spends on a later turn
 * of the event loop instead of in the copy that needs the buffer (a fork's, a conversation's that
 * outgrew its array). One per thread, for the size last asked (with a quarter more).
 */
let spare: SharedArrayBuffer | null = null;

/** A shared buffer for `capacity` ids (the spare when it fits: at most twice as large). */
function idsBuffer(capacity: number): SharedArrayBuffer {
  const bytes = capacity * Uint32Array.BYTES_PER_ELEMENT;
  if (bytes < SPARE_FROM_BYTES) return new SharedArrayBuffer(bytes);
  const ready = spare;
  spare = null;
  setImmediate(() => {
    spare ??= touched(new SharedArrayBuffer((capacity + (capacity >>> 2)) * Uint32Array.BYTES_PER_ELEMENT));
  }).unref();
  return ready && ready.byteLength >= bytes && ready.byteLength <= 2 * bytes
    ? ready
    : new SharedArrayBuffer(bytes);
}

/** `buffer` with every page written once (zeros, as it already reads). */
function touched(buffer: SharedArrayBuffer): SharedArrayBuffer {
  new Uint32Array(buffer).fill(0);
  return buffer;
}

/** A new array's buffer with `length` ids written, as `buildIds` makes it and `adopt` takes it. */
export interface BuiltIds {
  readonly buffer: SharedArrayBuffer;
  readonly length: number;
}

/**
 * The buffer of a new conversation array holding `prefix` (a view of another array's start, or
 * empty) and then `parts`, with room for `room` more ids and spare, with `parts` as views of it.
 * Touches no registry, so it runs on any thread: the encode worker builds a fork's array with it
 * and the event loop `adopt`s it; `copyOf` is the same on the event loop.
 */
export function buildIds(
  prefix: Uint32Array,
  parts: readonly Uint32Array[],
  room: number,
): BuiltIds & { readonly parts: Uint32Array[] } {
  const length = prefix.length + idsLength(parts);
  const buffer = idsBuffer(withRoom(length + room));
  const ids = new Uint32Array(buffer);
  ids.set(prefix);
  const views: Uint32Array[] = [];
  let at = prefix.length;
  for (const part of parts) {
    ids.set(part, at);
    views.push(ids.subarray(at, at + part.length));
    at += part.length;
  }
  return { buffer, length, parts: views };
}

/** A growing, append-only array of one conversation's ids. */
export class ConversationIds {
  private readonly ids: Uint32Array;
  /** Ids written: `[0, length)` never changes. */
  private written = 0;

  /** An array with room for at least `capacity` ids (all of `buffer` when given: one `buildIds` made). */
  constructor(capacity: number, buffer: SharedArrayBuffer = idsBuffer(capacity)) {
    this.ids = new Uint32Array(buffer);
    appendOnly.set(buffer, null);
  }

  /** A new array holding `prefix` (a view of another array's start), with room for `room` more ids (and some spare). */
  static copyOf(prefix: Uint32Array, room: number): ConversationIds {
    return ConversationIds.adopt(buildIds(prefix, [], room), prefix);
  }

  /**
   * The array `buildIds` made (on any thread) from `prefix`, a view of another array's start (or
   * an empty view when it copied none): what `copyOf` then `append` of its parts would be.
   */
  static adopt(built: BuiltIds, prefix: Uint32Array): ConversationIds {
    const array = new ConversationIds(built.buffer.byteLength / Uint32Array.BYTES_PER_ELEMENT, built.buffer);
    array.written = built.length;
    if (prefix.length > 0 && isAppendOnly(prefix))
      appendOnly.set(built.buffer, { source: new WeakRef(prefix.buffer), length: prefix.length });
    return array;
  }

  /** Ids written so far. */
  get length(): number {
    return this.written;
  }

  /** Bytes the array holds (its whole capacity). */
  get bytes(): number {
    return this.ids.byteLength;
  }

  /** Ids the array has room for. */
  get capacity(): number {
    return this.ids.length;
  }

  /** The shared memory the ids are in (what the encode worker copies a prefix from). */
  get buffer(): SharedArrayBuffer {
    return this.ids.buffer as SharedArrayBuffer;
  }

  /** The first `end` ids (`end` ≤ `length`), without copying. */
  view(end: number): Uint32Array {
    return this.ids.subarray(0, end);
  }

  /**
   * Writes `parts` one after another from `at` (≤ `length`) and returns where they end; -1, with
   * nothing written, when they do not fit or differ from the ids already written past `at`.
   */
  append(at: number, parts: readonly Uint32Array[]): number {
    const end = at + idsLength(parts);
    if (end > this.ids.length || !this.agrees(at, parts)) return -1;
    let to = at;
    for (const part of parts) {
      const from = Math.max(0, this.written - to);
      if (from < part.length) this.ids.set(from === 0 ? part : part.subarray(from), to + from);
      to += part.length;
    }
    this.written = Math.max(this.written, end);
    return end;
  }

  /** True when `parts`, from `at`, equal the ids already written there. */
  private agrees(at: number, parts: readonly Uint32Array[]): boolean {
    let to = at;
    for (const part of parts) {
      for (let k = 0; k < part.length && to < this.written; k++, to++)
        if (this.ids[to] !== part[k]) return false;
      if (to >= this.written) return true;
    }
    return true;
  }
}

/** The number of ids in `parts` together. */
export function idsLength(parts: readonly Uint32Array[]): number {
  let length = 0;
  for (const part of parts) length += part.length;
  return length;
}

/**
 * True when `ids` is a view of a `ConversationIds` array from its start: then `ids` never change,
 * and neither do the ids of any longer view of the same buffer up to its own length, so what was
 * computed from a prefix of one view (block hashes) holds for every view.
 */
export function isAppendOnly(ids: Uint32Array): boolean {
  return ids.byteOffset === 0 && appendOnly.has(ids.buffer);
}

/** The array whose first ids `ids`' array copied (a fork's base), or null. */
export function copiedFrom(ids: Uint32Array): CopiedPrefix | null {
  return appendOnly.get(ids.buffer) ?? null;
}
