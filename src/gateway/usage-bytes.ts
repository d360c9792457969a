/**
 * Token usage read straight from an answer's bytes. `JSON.parse` of the ~100 bytes of a
 * `"usage":{…}` costs about 1 µs (decoding, building the objects), a noticeable part of a short
 * request's CPU. The objects servers send are plain: integer or null fields, and objects of those
 * (`prompt_tokens_details`). This reads that shape and nothing else, keeping only the three
 * fields the router uses; on anything else (a string value, a fraction, an escape) it answers
 * `NOT_PLAIN` and the caller parses the object with `JSON.parse`, so the usage is always what
 * `JSON.parse` would give (duplicate keys: the last wins).
 */
import type { ResponseUsage } from "../scheduler/framework/types.ts";

/** The object is not plain: parse it with `JSON.parse`. */
export const NOT_PLAIN = null;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const ZERO = 0x30;
const NINE = 0x39;
const NULL = Buffer.from("null");
/** Longest integer read here (past it a double rounds: left to JSON.parse). */
const MAX_DIGITS = 15;
const PROMPT = Buffer.from("prompt_tokens");
const COMPLETION = Buffer.from("completion_tokens");
const DETAILS = Buffer.from("prompt_tokens_details");
const CACHED = Buffer.from("cached_tokens");

/** A value read: an integer, null, an object (`OBJECT`, its fields read by the caller), or not plain. */
const OBJECT = -1;
const NULL_VALUE = -2;
const BAD = -3;

/** Reading state over one object; `end` is where the object must end. */
class Reader {
  at: number;
  prompt: number | undefined = undefined;
  completion = 0;
  cached = 0;

  constructor(
    private readonly buf: Buffer,
    start: number,
  ) {
    this.at = start;
  }

  /** Reads `{…}` at `at`; `inDetails` when it is `prompt_tokens_details`' value. False when not plain. */
  object(depth: number, inDetails: boolean): boolean {
    const buf = this.buf;
    if (buf[this.at] !== OPEN) return false;
    this.at++;
    this.space();
    if (buf[this.at] === CLOSE) {
      this.at++;
      return true;
    }
    for (;;) {
      this.space();
      const keyStart = this.at + 1;
      if (!this.key()) return false;
      const keyEnd = this.at - 1;
      this.space();
      if (buf[this.at++] !== COLON) return false;
      this.space();
      const field =
        depth === 0 ? topField(buf, keyStart, keyEnd) : inDetails && detailsField(buf, keyStart, keyEnd);
      if (field === DETAILS) this.cached = 0;
      const value = this.value(depth, field === DETAILS);
      if (value === BAD) return false;
      if (field === PROMPT) this.prompt = value >= 0 ? value : undefined;
      else if (field === COMPLETION) this.completion = Math.max(value, 0);
      else if (field === CACHED) this.cached = Math.max(value, 0);
      this.space();
      const next = buf[this.at++];
      if (next === CLOSE) return true;
      if (next !== COMMA) return false;
    }
  }

  /** Skips a key of printable ASCII without escapes; false when the key is anything else. */
  private key(): boolean {
    const buf = this.buf;
    if (buf[this.at] !== QUOTE) return false;
    for (let i = this.at + 1; i < buf.length; i++) {
      const b = buf[i]!;
      if (b === QUOTE) {
        this.at = i + 1;
        return true;
      }
      if (b === BACKSLASH || b < 0x20 || b > 0x7e) return false;
    }
    return false;
  }

  private value(depth: number, inDetails: boolean): number {
    const buf = this.buf;
    if (buf[this.at] === OPEN) return this.object(depth + 1, inDetails) ? OBJECT : BAD;
    if (same(buf, this.at, this.at + 4, NULL)) {
      this.at += 4;
      return NULL_VALUE;
    }
    const start = this.at;
    let value = 0;
    for (let b = buf[this.at]; b !== undefined && b >= ZERO && b <= NINE; b = buf[++this.at])
      value = value * 10 + b - ZERO;
    const digits = this.at - start;
    // JSON has no leading zeros; a sign, fraction or exponent is left to JSON.parse.
    if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && buf[start] === ZERO)) return BAD;
    return value;
  }

  private space(): void {
    const buf = this.buf;
    for (let b = buf[this.at]; b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09; b = buf[++this.at]);
  }
}

/** Which of the top-level fields the router reads `buf[from, to)` names, if any. */
function topField(buf: Buffer, from: number, to: number): Buffer | false {
  if (same(buf, from, to, PROMPT)) return PROMPT;
  if (same(buf, from, to, COMPLETION)) return COMPLETION;
  if (same(buf, from, to, DETAILS)) return DETAILS;
  return false;
}

/** `CACHED` when `buf[from, to)` names it (a field of `prompt_tokens_details`). */
function detailsField(buf: Buffer, from: number, to: number): Buffer | false {
  return same(buf, from, to, CACHED) && CACHED;
}

function same(buf: Buffer, from: number, to: number, word: Buffer): boolean {
  if (to - from !== word.length) return false;
  for (let i = 0; i < word.length; i++) if (buf[from + i] !== word[i]) return false;
  return true;
}

/**
 * The usage in the object `buf[start, end)` when the object is plain (undefined when it has no
 * integer `prompt_tokens`), or `NOT_PLAIN`.
 */
export function plainUsageAt(
  buf: Buffer,
  start: number,
  end: number,
): ResponseUsage | undefined | typeof NOT_PLAIN {
  const reader = new Reader(buf, start);
  if (!reader.object(0, false) || reader.at !== end) return NOT_PLAIN;
  if (reader.prompt === undefined) return undefined;
  return { promptTokens: reader.prompt, completionTokens: reader.completion, cachedTokens: reader.cached };
}
