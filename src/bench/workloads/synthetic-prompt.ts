/**
 * Synthetic prompt content from trace block ids (shared/reference/workloads.md §5): a segment
 * `(ns, id)` always expands to the same tokens, each token exactly 4 ASCII characters (three
 * lowercase letters and a space), so the router's text hashing, the tokenizer (1 token per 4
 * chars, src/tokenizer) and the engine's token hashing all see the trace's sharing structure.
 */
import { CHARS_PER_TOKEN } from "../../tokenizer/tokenizer.ts";
import { fnv1a32, Rng } from "./rng.ts";
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
 * Expands segments to token ids and text. Each segment's ids are cached (bounded, oldest namespace
 * dropped first) because multi-turn workloads resend the same blocks on every turn: a prompt is
 * then a series of memory copies.
 */
export class SyntheticPromptBuilder {
  private readonly cache = new Map<string, Map<number, Uint32Array>>();
  private cachedTokens = 0;

  /** @param maxCachedTokens bound on cached token ids (4 bytes each). */
  constructor(private readonly maxCachedTokens = 64_000_000) {}

  /** Token ids of the prompt (what `defaultTokenizer.encode(text(segments))` returns). */
  tokens(segments: readonly Segment[]): Uint32Array {
    const out = new Uint32Array(totalTokens(segments));
    let at = 0;
    for (const s of segments) {
      const ids = this.ids(s);
      out.set(ids.length === s.tokens ? ids : ids.subarray(0, s.tokens), at);
      at += s.tokens;
    }
    return out;
  }

  /** Prompt text: 4 characters per token (regenerated, not cached: only plugins that read text need it). */
  text(segments: readonly Segment[]): string {
    const bytes = Buffer.allocUnsafe(totalTokens(segments) * CHARS_PER_TOKEN);
    let at = 0;
    for (const s of segments) {
      const units = segmentUnits(s.ns, s.id, s.tokens);
      for (let i = 0; i < s.tokens; i++, at += CHARS_PER_TOKEN) unitChars(units[i]!, bytes, at);
    }
    return bytes.toString("latin1", 0, at);
  }

  private ids(s: Segment): Uint32Array {
    let byId = this.cache.get(s.ns);
    const hit = byId?.get(s.id);
    if (hit && hit.length >= s.tokens) return hit;
    const rng = segmentRng(s.ns, s.id);
    const ids = new Uint32Array(s.tokens);
    for (let i = 0; i < ids.length; i++) ids[i] = unitIds[rng.int(VOCAB)]!;
    if (!byId) {
      byId = new Map();
      this.cache.set(s.ns, byId);
    }
    this.cachedTokens += ids.length - (hit?.length ?? 0);
    byId.set(s.id, ids);
    this.evict(s.ns);
    return ids;
  }

  private evict(keep: string): void {
    for (const [ns, byId] of this.cache) {
      if (this.cachedTokens <= this.maxCachedTokens || ns === keep) return;
      for (const ids of byId.values()) this.cachedTokens -= ids.length;
      this.cache.delete(ns);
    }
  }
}

/** The first `n` token units of segment `(ns, id)`; a shorter request is a prefix of a longer one. */
export function segmentUnits(ns: string, id: number, n: number): Uint16Array {
  const rng = segmentRng(ns, id);
  const units = new Uint16Array(n);
  for (let i = 0; i < n; i++) units[i] = rng.int(VOCAB);
  return units;
}

/** The generator behind segment `(ns, id)`: its draws are the segment's token units in order. */
function segmentRng(ns: string, id: number): Rng {
  return new Rng(fnv1a32(`${ns}:${id}`));
}

/** Sum of segment lengths in tokens. */
export function totalTokens(segments: readonly Segment[]): number {
  let n = 0;
  for (const s of segments) n += s.tokens;
  return n;
}
