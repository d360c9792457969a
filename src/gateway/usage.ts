/**
 * Reads token usage from a response without parsing every SSE chunk: the gateway keeps only the
 * last few kilobytes of a body (chunk references, no copies) and, at the end, parses the last
 * `"usage":{…}` object found there. OpenAI-style servers put usage in the final chunk (streaming
 * with `stream_options.include_usage`) or at the end of the JSON body.
 */
import type { ResponseUsage } from "../scheduler/framework/types.ts";
import { NOT_PLAIN, plainUsageAt } from "./usage-bytes.ts";

/** How much of a body's end is kept: a usage chunk is well under 1 KiB. */
const TAIL_BYTES = 4096;
const USAGE_KEY = Buffer.from('"usage"');
/** Dropped chunks the tail's array holds before it is compacted. */
const COMPACT_AFTER = 64;

/**
 * Keeps references to the last chunks of a body until they cover at least `TAIL_BYTES`. Dropped
 * chunks only move a start index (no `shift` per token); the array is compacted once that many
 * have gone.
 */
export class BodyTail {
  private chunks: Buffer[] = [];
  /** Index of the oldest kept chunk. */
  private first = 0;
  /** Bytes of the kept chunks. */
  private bytes = 0;

  /** Records a chunk (O(1) amortised; never copies). */
  push(chunk: Buffer): void {
    const chunks = this.chunks;
    chunks.push(chunk);
    this.bytes += chunk.length;
    while (chunks.length - this.first > 1 && this.bytes - (chunks[this.first] as Buffer).length >= TAIL_BYTES)
      this.bytes -= (chunks[this.first++] as Buffer).length;
    if (this.first >= COMPACT_AFTER) {
      this.chunks = chunks.slice(this.first);
      this.first = 0;
    }
  }

  /** The kept tail as one buffer. */
  buffer(): Buffer {
    const { chunks, first } = this;
    if (chunks.length - first === 1) return chunks[first] as Buffer;
    return Buffer.concat(first === 0 ? chunks : chunks.slice(first), this.bytes);
  }
}

/** End index (exclusive) of the JSON object starting at `start`, or -1 if it is cut off. */
function objectEnd(buf: Buffer, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b) depth++;
    else if (c === 0x7d && --depth === 0) return i + 1;
  }
  return -1;
}

function skipSpaceAndColon(buf: Buffer, i: number): number {
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x3a || buf[i] === 0x0a || buf[i] === 0x09)) i++;
  return i;
}

function toUsage(raw: Record<string, unknown>): ResponseUsage | undefined {
  const prompt = raw.prompt_tokens;
  if (typeof prompt !== "number") return undefined;
  const completion = typeof raw.completion_tokens === "number" ? raw.completion_tokens : 0;
  const details = raw.prompt_tokens_details as { cached_tokens?: unknown } | null | undefined;
  const cached = typeof details?.cached_tokens === "number" ? details.cached_tokens : 0;
  return { promptTokens: prompt, completionTokens: completion, cachedTokens: cached };
}

/** The usage in the object `buf[start, end)`: read from its bytes when plain, else by `JSON.parse`. */
function usageAt(buf: Buffer, start: number, end: number): ResponseUsage | undefined {
  const plain = plainUsageAt(buf, start, end);
  if (plain !== NOT_PLAIN) return plain;
  try {
    return toUsage(JSON.parse(buf.toString("utf8", start, end)));
  } catch {
    return undefined;
  }
}

/** The last non-null `"usage"` object in `buf`, or undefined when there is none. */
export function findUsage(buf: Buffer): ResponseUsage | undefined {
  let at = buf.lastIndexOf(USAGE_KEY);
  while (at >= 0) {
    const start = skipSpaceAndColon(buf, at + USAGE_KEY.length);
    if (buf[start] === 0x7b) {
      const end = objectEnd(buf, start);
      if (end > 0) return usageAt(buf, start, end);
    }
    at = at === 0 ? -1 : buf.lastIndexOf(USAGE_KEY, at - 1);
  }
  return undefined;
}
