/**
 * Synthetic prompt content from trace block ids (shared/reference/workloads.md §5): a segment
 * `(ns, id)` always expands to the same tokens (a keyed hash per position instead of the §5 PRNG
 * stream, so any block is computed without state), each token exactly 4 ASCII characters (three
 * lowercase letters and a space), so the router's text hashing, the tokenizer (1 token per 4
 * chars, src/tokenizer) and the engine's token hashing all see the trace's sharing structure.
 */
import { CHARS_PER_TOKEN } from "../tokenizer/tokenizer.ts";
import { mix32, NamespaceHashes } from "./rng.ts";
import type { Segment } from "./types.ts";

const LETTERS = 26;
const VOCAB = LETTERS * LETTERS * LETTERS;
const A = 97;
const SPACE = 32;

/** Token ids of the 4-char units, equal to what `CharChunkTokenizer` assigns to their text. */
const unitIds = buildUnitIds();

function unitChars(unit: number, out: Uint8Array, at: number): void {
  out[at] = A + (unit % LETTERS);
  out[at + 1] = A + (Math.floor(unit / LETTERS) % LETTERS);
  out[at + 2] = A + Math.floor(unit / (LETTERS * LETTERS));
  out[at + 3] = SPACE;
}

function buildUnitIds(): Uint32Array {
  const ids = new Uint32Array(VOCAB);
  const chars = new Uint8Array(CHARS_PER_TOKEN);
  for (let u = 0; u < VOCAB; u++) {
    unitChars(u, chars, 0);
    let h = 0x811c9dc5;
    for (let i = 0; i < CHARS_PER_TOKEN; i++) h = Math.imul(h ^ chars[i]!, 0x01000193);
    ids[u] = h >>> 0;
  }
  return ids;
}

/**
 * Expands segments to token ids and text. Unit `i` of segment `(ns, id)` is a hash of
 * (ns, id, i), so any token is computed in a few integer operations with no cache and no memory
 * held between requests, whatever the number of live sessions.
 */
export class SyntheticPromptBuilder {
  private readonly nsHashes = new NamespaceHashes();

  /** Token ids of the prompt (what `defaultTokenizer.encode(text(segments))` returns). */
  tokens(segments: readonly Segment[]): Uint32Array {
    const out = new Uint32Array(totalTokens(segments));
    let at = 0;
    for (const s of segments) {
      const seed = segmentSeed(this.nsHashes.of(s.ns), s.id);
      for (let i = 0; i < s.tokens; i++) out[at++] = unitIds[unitAt(seed, i)]!;
    }
    return out;
  }

  /** Length of `text(segments)` in characters (ASCII, so also in bytes). */
  chars(segments: readonly Segment[]): number {
    return totalTokens(segments) * CHARS_PER_TOKEN;
  }

  /** Prompt text: 4 characters per token. */
  text(segments: readonly Segment[]): string {
    const bytes = Buffer.allocUnsafe(totalTokens(segments) * CHARS_PER_TOKEN);
    let at = 0;
    for (const s of segments) {
      const seed = segmentSeed(this.nsHashes.of(s.ns), s.id);
      for (let i = 0; i < s.tokens; i++, at += CHARS_PER_TOKEN) unitChars(unitAt(seed, i), bytes, at);
    }
    return bytes.toString("latin1", 0, at);
  }
}

/** Seed of segment `(ns, id)` from the namespace hash. */
function segmentSeed(nsHash: number, id: number): number {
  return mix32(nsHash, id);
}

/** Token unit `i` of a segment (murmur3-style finaliser of seed + index). */
function unitAt(seed: number, i: number): number {
  let x = (seed + Math.imul(i + 1, 0x9e3779b1)) | 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return ((x ^ (x >>> 16)) >>> 0) % VOCAB;
}

/** Sum of segment lengths in tokens. */
export function totalTokens(segments: readonly Segment[]): number {
  let n = 0;
  for (const s of segments) n += s.tokens;
  return n;
}
