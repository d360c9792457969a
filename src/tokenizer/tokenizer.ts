/**
 * Tokenizer contract: text → token ids. The simulator, the router and the fleet simulator all use
 * one so that token counts and prefix sharing agree. A real tokenizer can implement this later.
 */
export interface Tokenizer {
  /** Stable name, reported in diagnostics. */
  readonly name: string;
  /** Token ids of `text`. */
  encode(text: string): Uint32Array;
  /** Number of tokens `encode(text)` would return, without allocating them. */
  count(text: string): number;
}

/** Characters per token of the built-in tokenizer (shared/reference/workloads.md §5). */
export const CHARS_PER_TOKEN = 4;

/**
 * Deterministic tokenizer: one token per 4 UTF-16 code units (the last token may be shorter).
 * The id is FNV-1a (32-bit) over the chunk's code units, so equal text chunks give equal ids and a
 * shared text prefix of whole chunks gives a shared token prefix. Fast: no tables, no allocation
 * beyond the result.
 */
export class CharChunkTokenizer implements Tokenizer {
  readonly name = "char4";

  count(text: string): number {
    return Math.ceil(text.length / CHARS_PER_TOKEN);
  }

  encode(text: string): Uint32Array {
    const n = this.count(text);
    const out = new Uint32Array(n);
    const len = text.length;
    for (let t = 0, i = 0; t < n; t++) {
      let h = 0x811c9dc5;
      const end = Math.min(i + CHARS_PER_TOKEN, len);
      for (; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
      out[t] = h >>> 0;
    }
    return out;
  }
}

/** The default tokenizer instance (stateless, safe to share). */
export const defaultTokenizer: Tokenizer = new CharChunkTokenizer();
