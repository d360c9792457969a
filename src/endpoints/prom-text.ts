/**
 * An allocation-light scanner for the Prometheus text exposition format. It does not build a
 * model of the page: it walks the lines once, matches only the metric names asked for, and hands
 * each matching sample to a visitor as positions into the text, so unwanted lines (histogram
 * buckets, comments, other families) cost a few character comparisons and no allocation.
 */

/** Called once per sample whose name is `names[nameIndex]`; labels lie in `text[labelsStart, labelsEnd)`. */
export type SampleVisitor = (
  nameIndex: number,
  labelsStart: number,
  labelsEnd: number,
  value: number,
) => void;

const HASH = 0x23;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;
const COMMA = 0x2c;

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d;
}

/**
 * Visits every sample of the given metric families in `text`. A name matches only as a whole
 * token (`foo` does not match `foo_bucket`). Malformed lines are skipped; returns their count.
 */
export function scanSamples(text: string, names: readonly string[], visit: SampleVisitor): number {
  let malformed = 0;
  const length = text.length;
  let lineStart = 0;
  while (lineStart < length) {
    let lineEnd = text.indexOf("\n", lineStart);
    if (lineEnd === -1) lineEnd = length;
    let p = lineStart;
    while (p < lineEnd && isBlank(text.charCodeAt(p))) p++;
    if (p < lineEnd && text.charCodeAt(p) !== HASH) {
      const nameIndex = matchName(text, p, lineEnd, names);
      if (nameIndex >= 0 && !visitLine(text, p + names[nameIndex]!.length, lineEnd, nameIndex, visit)) {
        malformed++;
      }
    }
    lineStart = lineEnd + 1;
  }
  return malformed;
}

function matchName(text: string, start: number, lineEnd: number, names: readonly string[]): number {
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const after = start + name.length;
    if (after > lineEnd) continue;
    // The cheap delimiter test first: most foreign lines fail it without a string compare.
    const next = after === lineEnd ? OPEN_BRACE : text.charCodeAt(after);
    if ((next === OPEN_BRACE || isBlank(next)) && text.startsWith(name, start)) return i;
  }
  return -1;
}

function visitLine(
  text: string,
  p: number,
  lineEnd: number,
  nameIndex: number,
  visit: SampleVisitor,
): boolean {
  while (p < lineEnd && isBlank(text.charCodeAt(p))) p++;
  let labelsStart = p;
  let labelsEnd = p;
  if (text.charCodeAt(p) === OPEN_BRACE) {
    labelsStart = p + 1;
    labelsEnd = findLabelsEnd(text, labelsStart, lineEnd);
    if (labelsEnd < 0) return false;
    p = labelsEnd + 1;
  }
  while (p < lineEnd && isBlank(text.charCodeAt(p))) p++;
  let valueEnd = p;
  while (valueEnd < lineEnd && !isBlank(text.charCodeAt(valueEnd))) valueEnd++;
  if (valueEnd === p) return false;
  const value = parseSampleValue(text.slice(p, valueEnd));
  if (value === undefined) return false;
  visit(nameIndex, labelsStart, labelsEnd, value);
  return true;
}

/** Index of the `}` closing a label set that starts at `start`, honouring quotes; -1 if none. */
function findLabelsEnd(text: string, start: number, lineEnd: number): number {
  let inQuotes = false;
  for (let p = start; p < lineEnd; p++) {
    const code = text.charCodeAt(p);
    if (inQuotes) {
      if (code === BACKSLASH) p++;
      else if (code === QUOTE) inQuotes = false;
    } else if (code === QUOTE) inQuotes = true;
    else if (code === CLOSE_BRACE) return p;
  }
  return -1;
}

/** Parses a sample value: decimals, exponents, `NaN`, `+Inf`, `-Inf`. Undefined when not a number. */
export function parseSampleValue(token: string): number | undefined {
  switch (token) {
    case "+Inf":
    case "Inf":
      return Number.POSITIVE_INFINITY;
    case "-Inf":
      return Number.NEGATIVE_INFINITY;
    case "NaN":
      return Number.NaN;
  }
  const value = Number(token);
  return Number.isNaN(value) ? undefined : value;
}

/**
 * The value of label `name` within `text[start, end)` (a label set without braces), unescaped,
 * or undefined when absent or malformed.
 */
export function readLabel(text: string, start: number, end: number, name: string): string | undefined {
  let p = start;
  while (p < end) {
    while (p < end && (isBlank(text.charCodeAt(p)) || text.charCodeAt(p) === COMMA)) p++;
    const nameStart = p;
    while (p < end && text.charCodeAt(p) !== EQUALS && !isBlank(text.charCodeAt(p))) p++;
    const nameEnd = p;
    while (p < end && isBlank(text.charCodeAt(p))) p++;
    if (p >= end || text.charCodeAt(p) !== EQUALS) return undefined;
    p++;
    while (p < end && isBlank(text.charCodeAt(p))) p++;
    if (text.charCodeAt(p) !== QUOTE) return undefined;
    const valueStart = p + 1;
    const valueEnd = closingQuote(text, valueStart, end);
    if (valueEnd < 0) return undefined;
    if (nameEnd - nameStart === name.length && text.startsWith(name, nameStart)) {
      return unescapeLabel(text.slice(valueStart, valueEnd));
    }
    p = valueEnd + 1;
  }
  return undefined;
}

function closingQuote(text: string, start: number, end: number): number {
  for (let p = start; p < end; p++) {
    const code = text.charCodeAt(p);
    if (code === BACKSLASH) p++;
    else if (code === QUOTE) return p;
  }
  return -1;
}

function unescapeLabel(raw: string): string {
  if (!raw.includes("\\")) return raw;
  return raw.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
}

/** True when every `[label, value]` pair has that exact value in `text[start, end)`. */
export function labelsMatch(
  text: string,
  start: number,
  end: number,
  matchers: readonly (readonly [string, string])[],
): boolean {
  for (const [label, value] of matchers) {
    if (readLabel(text, start, end, label) !== value) return false;
  }
  return true;
}
