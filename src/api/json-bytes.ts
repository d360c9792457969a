/**
 * `JSON.parse` of a request body's bytes that stays cheap for very long strings (an 800 KB
 * prompt). V8's JSON.parse reads a string literal character by character, checking each for
 * escapes (≈ 2.6 ns a byte: 2 ms for 800 KB), while `Buffer#toString` decodes the same bytes in a
 * native copy (≈ 0.3 ns a byte for ASCII). So in a large body, every long string value with no
 * escape and no control character is cut out and decoded natively, a placeholder takes its place
 * in the text JSON.parse reads, and a reviver puts the decoded string back. The result, and every
 * error, is exactly `JSON.parse(raw.toString("utf8"))`'s.
 */
import { randomBytes } from "node:crypto";

/** Bodies from this size on are scanned for long strings; smaller ones go to JSON.parse whole. */
const SCAN_FROM_BYTES = 64 * 1024;

/** String literals from this many bytes on (quotes excluded) are decoded natively. */
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

/** Parses a JSON body from its UTF-8 bytes; throws JSON.parse's own SyntaxError on invalid JSON. */
export function parseJsonBytes(raw: Buffer): unknown {
  if (raw.length < SCAN_FROM_BYTES) return JSON.parse(raw.toString("utf8"));
  const spans = longStringSpans(raw);
  if (spans.length === 0) return JSON.parse(raw.toString("utf8"));
  const strings: string[] = [];
  let text = "";
  let at = 0;
  for (let i = 0; i < spans.length; i += 2) {
    const start = spans[i]!;
    const end = spans[i + 1]!;
    // Spans start and end next to an ASCII quote, so no UTF-8 sequence is ever cut in two.
    text += `${raw.toString("utf8", at, start - 1)}${PLACEHOLDER_JSON_TAG}${strings.length}"`;
    strings.push(raw.toString("utf8", start, end));
    at = end + 1;
  }
  text += raw.toString("utf8", at);
  try {
    return JSON.parse(text, (_key, value) =>
      typeof value === "string" && value.startsWith(PLACEHOLDER_TAG)
        ? strings[Number(value.slice(PLACEHOLDER_TAG.length))]
        : value,
    );
  } catch {
    // The placeholders moved the error's position: let JSON.parse word it on the original text.
    return JSON.parse(raw.toString("utf8"));
  }
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
 * Whether `[start, end)` holds a byte below 0x20, four bytes at a time on aligned words: a word
 * `w` has one exactly when `(w - 0x20202020) & ~w & 0x80808080` is non-zero (a borrow only starts
 * at such a byte).
 */
function hasControlByte(raw: Buffer, start: number, end: number): boolean {
  const from = start + ((4 - ((raw.byteOffset + start) & 3)) & 3);
  const words = from < end ? (end - from) >>> 2 : 0;
  const to = from + words * 4;
  for (let i = start; i < Math.min(from, end); i++) if (raw[i]! < FIRST_PRINTABLE) return true;
  for (let i = to; i < end; i++) if (raw[i]! < FIRST_PRINTABLE) return true;
  const view = new Uint32Array(raw.buffer, raw.byteOffset + from, words);
  let borrows = 0;
  for (let i = 0; i < words; i++) {
    const w = view[i]!;
    borrows |= (w - 0x20202020) & ~w;
  }
  return (borrows & 0x80808080) !== 0;
}

/** Whether the string closed at `close` is an object key (a colon follows, after whitespace). */
function isKey(raw: Buffer, close: number): boolean {
  let i = close + 1;
  while (i < raw.length && (raw[i] === 0x20 || raw[i] === 0x0a || raw[i] === 0x0d || raw[i] === 0x09)) i++;
  return raw[i] === COLON;
}
