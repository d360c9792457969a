/**
 * `JSON.parse` of a request body's bytes that stays cheap for very long strings (an 800 KB
 * prompt). V8's JSON.parse reads a string literal character by character, checking each for
 * escapes (≈ 2.6 ns a byte: 2 ms for 800 KB), and decoding a long string at all is a fresh
 * large-object allocation (≈ 0.5 ms for 800 KB, mostly page faults). So in a large body, every
 * long string value with no escape and no control character is cut out, a placeholder takes its
 * place in the text JSON.parse reads, and the value stays bytes until something reads it: the
 * router hashes an ASCII prompt straight from the body's bytes and never decodes it. The value,
 * once read, and every error are exactly `JSON.parse(raw.toString("utf8"))`'s.
 */
import { isAscii } from "node:buffer";
import { randomBytes } from "node:crypto";
import type { TextPiece } from "./prompt.ts";

/** Bodies from this size on are scanned for long strings; smaller ones go to JSON.parse whole. */
const SCAN_FROM_BYTES = 64 * 1024;

/** String literals from this many bytes on (quotes excluded) are kept as bytes. */
const LONG_STRING_BYTES = 4 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const FIRST_PRINTABLE = 0x20;

/**
 * Prefix of the placeholder strings, random per process: a client cannot send a string that a
 * placeholder would be taken for. It starts with U+0000, written escaped in the JSON text.
 */
const PLACEHOLDER_TAG = `\u0000llmd-${randomBytes(16).toString("hex")}:`;
const PLACEHOLDER_JSON_TAG = `"\\u0000${PLACEHOLDER_TAG.slice(1)}`;

/** Where a placeholder sits in the parsed value: its holder (object or array) and key. */
interface Slot {
  holder: Record<string, unknown>;
  key: string;
}

/**
 * The long strings of one body, each the bytes `[start, end)` of the body, and the slots where
 * their placeholders sit in the parsed value.
 */
export class LongStrings {
  private readonly decoded: (string | undefined)[] = [];
  private readonly slots: Slot[] = [];

  constructor(
    private readonly raw: Buffer,
    private readonly spans: readonly number[],
  ) {}

  /** The index of the long string `value` stands for, or -1 when it is an ordinary value. */
  private indexOf(value: unknown): number {
    if (typeof value !== "string" || !value.startsWith(PLACEHOLDER_TAG)) return -1;
    return Number(value.slice(PLACEHOLDER_TAG.length));
  }

  /** The string `value` stands for (decoded once), or `value` itself when it is no placeholder. */
  text<T>(value: T): T | string {
    const i = this.indexOf(value);
    if (i < 0) return value;
    this.decoded[i] ??= this.raw.toString("utf8", this.spans[2 * i], this.spans[2 * i + 1]);
    return this.decoded[i];
  }

  /**
   * `value` as a piece of prompt text: an ASCII long string as its bytes (one byte is one UTF-16
   * code unit), any other long string decoded, an ordinary string as it is.
   */
  piece(value: string): TextPiece {
    const i = this.indexOf(value);
    if (i < 0) return value;
    const bytes = this.raw.subarray(this.spans[2 * i], this.spans[2 * i + 1]);
    return isAscii(bytes) ? bytes : (this.text(value) as string);
  }

  /** Records the slot of a placeholder met while parsing (JSON.parse's reviver). */
  note(holder: Record<string, unknown>, key: string, value: unknown): void {
    if (this.indexOf(value) >= 0) this.slots.push({ holder, key });
  }

  /**
   * Replaces every placeholder in the parsed value by its string, decoded when first read: each
   * slot becomes a property whose getter decodes and then turns it into a plain data property.
   */
  resolveLazily(): void {
    for (const { holder, key } of this.slots) {
      const placeholder = holder[key];
      const settle = (value: unknown) => {
        Object.defineProperty(holder, key, { value, writable: true, enumerable: true, configurable: true });
        return value;
      };
      Object.defineProperty(holder, key, {
        get: () => settle(this.text(placeholder)),
        set: settle,
        enumerable: true,
        configurable: true,
      });
    }
  }
}

/** The long strings of every body that has none (no placeholder, no slot). */
const NO_LONG_STRINGS = new LongStrings(Buffer.alloc(0), []);

/** A body's parsed value with its long strings still placeholders, and those strings. */
export interface JsonSkeleton {
  /** Long strings are placeholder strings here, each standing for one of `strings`. */
  value: unknown;
  strings: LongStrings;
}

/**
 * Parses a JSON body from its UTF-8 bytes, long strings left as placeholders (strings, so type
 * checks on the value hold); throws JSON.parse's own SyntaxError on invalid JSON.
 */
export function parseJsonSkeleton(raw: Buffer): JsonSkeleton {
  const spans = raw.length < SCAN_FROM_BYTES ? [] : longStringSpans(raw);
  if (spans.length === 0) return { value: JSON.parse(raw.toString("utf8")), strings: NO_LONG_STRINGS };
  const strings = new LongStrings(raw, spans);
  let text = "";
  let at = 0;
  for (let i = 0; i < spans.length; i += 2) {
    const start = spans[i]!;
    // Spans start and end next to an ASCII quote, so no UTF-8 sequence is ever cut in two.
    text += `${raw.toString("utf8", at, start - 1)}${PLACEHOLDER_JSON_TAG}${i / 2}"`;
    at = spans[i + 1]! + 1;
  }
  text += raw.toString("utf8", at);
  let value: unknown;
  try {
    value = JSON.parse(text, function (this: Record<string, unknown>, key, item) {
      strings.note(this, key, item);
      return item;
    });
  } catch {
    // The placeholders moved the error's position: let JSON.parse word it on the original text.
    return { value: JSON.parse(raw.toString("utf8")), strings: NO_LONG_STRINGS };
  }
  return { value, strings };
}

/** `JSON.parse(raw.toString("utf8"))`'s value, long strings decoded when first read. */
export function parseJsonBytes(raw: Buffer): unknown {
  const { value, strings } = parseJsonSkeleton(raw);
  strings.resolveLazily();
  return strings.text(value);
}

/**
 * `[start, end)` byte ranges of the contents of the body's long string values that JSON.parse
 * would decode as they are (no escape, no control character), in document order, flattened.
 * Quotes are found with `indexOf` (memchr): outside a string a quote opens one, inside it an
 * unescaped quote closes it, exactly as a JSON lexer reads them. Object keys are left alone.
 */
function longStringSpans(raw: Buffer): number[] {
  const spans: number[] = [];
  let open = raw.indexOf(QUOTE);
  while (open >= 0) {
    let close = raw.indexOf(QUOTE, open + 1);
    while (close >= 0 && escaped(raw, close)) close = raw.indexOf(QUOTE, close + 1);
    // Unterminated: JSON.parse reports it.
    if (close < 0) break;
    const start = open + 1;
    if (close - start >= LONG_STRING_BYTES && decodesAsIs(raw, start, close) && !isKey(raw, close))
      spans.push(start, close);
    open = raw.indexOf(QUOTE, close + 1);
  }
  return spans;
}

/** Whether the quote at `at` is escaped: preceded by an odd run of backslashes. */
function escaped(raw: Buffer, at: number): boolean {
  let backslashes = 0;
  for (let i = at - 1; i >= 0 && raw[i] === BACKSLASH; i--) backslashes++;
  return (backslashes & 1) === 1;
}

/** Whether the string contents `[start, end)` hold no escape and no control character. */
function decodesAsIs(raw: Buffer, start: number, end: number): boolean {
  return raw.subarray(start, end).indexOf(BACKSLASH) < 0 && !hasControlByte(raw, start, end);
}

/**
 * Whether `[start, end)` holds a byte below 0x20, sixteen bytes at a time on aligned words: a word
 * `w` has one exactly when `(w - 0x20202020) & ~w & 0x80808080` is non-zero (a borrow only starts
 * at such a byte). Int32 words keep V8's loop in int32 arithmetic.
 */
function hasControlByte(raw: Buffer, start: number, end: number): boolean {
  const from = start + ((4 - ((raw.byteOffset + start) & 3)) & 3);
  const words = from < end ? (end - from) >>> 2 : 0;
  const to = from + words * 4;
  for (let i = start; i < Math.min(from, end); i++) if (raw[i]! < FIRST_PRINTABLE) return true;
  for (let i = to; i < end; i++) if (raw[i]! < FIRST_PRINTABLE) return true;
  const view = new Int32Array(raw.buffer, raw.byteOffset + from, words);
  let i = 0;
  for (; i + 3 < words; i += 4) {
    const a = view[i]!;
    const b = view[i + 1]!;
    const c = view[i + 2]!;
    const d = view[i + 3]!;
    const borrows =
      (((a - 0x20202020) | 0) & ~a) |
      (((b - 0x20202020) | 0) & ~b) |
      (((c - 0x20202020) | 0) & ~c) |
      (((d - 0x20202020) | 0) & ~d);
    if ((borrows & 0x80808080) !== 0) return true;
  }
  for (; i < words; i++) if ((((view[i]! - 0x20202020) | 0) & ~view[i]! & 0x80808080) !== 0) return true;
  return false;
}

/** Whether the string closed at `close` is an object key (a colon follows, after whitespace). */
function isKey(raw: Buffer, close: number): boolean {
  let i = close + 1;
  while (i < raw.length && (raw[i] === 0x20 || raw[i] === 0x0a || raw[i] === 0x0d || raw[i] === 0x09)) i++;
  return raw[i] === COLON;
}
