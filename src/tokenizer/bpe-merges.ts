/**
 * Byte-level BPE over token ids: a word's UTF-8 bytes start as one token each, and the adjacent
 * pair of lowest merge rank is merged (the leftmost of equal ones) until no pair merges, as the
 * Hugging Face BPE model does. The merges sit in an open-addressing table of typed arrays keyed by
 * the pair's ids, so a lookup is a multiply and a probe or two, not the library's string key (what
 * that saves a turn: docs/precise-prefix.md, "New text each turn, and new words merged over ids").
 */
import { byteLevelCharacter, byteLevelOf } from "./byte-level.ts";

/** The vocabulary ids of the byte-level characters (byte → id), or null if one is missing. */
function byteIds(vocab: ReadonlyMap<string, number>): Int32Array | null {
  const ids = new Int32Array(256);
  for (let byte = 0; byte < 256; byte++) {
    const id = vocab.get(byteLevelCharacter(byte));
    if (id === undefined) return null;
    ids[byte] = id;
  }
  return ids;
}

/** A BPE model's merges by pair of ids: the pair's rank and the id of the token it makes. */
export class BpeMerges {
  private readonly left: Int32Array;
  private readonly right: Int32Array;
  private readonly rank: Int32Array;
  private readonly made: Int32Array;
  private readonly mask: number;
  /** Scratch per word: its tokens, and the table slot of each token's pair with the next (−1: no merge). */
  private tokens = new Int32Array(64);
  private pairs = new Int32Array(64);

  private constructor(
    size: number,
    private readonly bytes: Int32Array,
    private readonly vocab: ReadonlyMap<string, number>,
    private readonly ignoreMerges: boolean,
  ) {
    this.left = new Int32Array(size).fill(-1);
    this.right = new Int32Array(size);
    this.rank = new Int32Array(size);
    this.made = new Int32Array(size);
    this.mask = size - 1;
  }

  /**
   * The merges of a BPE model (`merges[r]` is the pair of rank r), or null when a byte, a pair's
   * token or its merged token is not in `vocab` (such a model is left to the library).
   * `ignoreMerges`: a word that is itself in the vocabulary is that one token (Llama 3).
   */
  static of(
    merges: readonly (readonly [string, string])[],
    vocab: ReadonlyMap<string, number>,
    ignoreMerges: boolean,
  ): BpeMerges | null {
    const bytes = byteIds(vocab);
    if (!bytes) return null;
    let size = 1024;
    while (size < merges.length * 1.5) size *= 2;
    const table = new BpeMerges(size, bytes, vocab, ignoreMerges);
    for (let r = 0; r < merges.length; r++) {
      const [a, b] = merges[r]!;
      const left = vocab.get(a);
      const right = vocab.get(b);
      const made = vocab.get(a + b);
      if (left === undefined || right === undefined || made === undefined) return null;
      table.add(left, right, r, made);
    }
    return table;
  }

  /** Appends the ids of `word` (text without added tokens, one pre-tokenizer piece) to `out`. */
  encode(word: string, out: number[]): void {
    const utf8 = Buffer.from(word, "utf8");
    if (this.ignoreMerges) {
      const whole = this.vocab.get(byteLevelOf(utf8));
      if (whole !== undefined) {
        out.push(whole);
        return;
      }
    }
    let n = utf8.length;
    if (this.tokens.length < n) {
      this.tokens = new Int32Array(n * 2);
      this.pairs = new Int32Array(n * 2);
    }
    const tokens = this.tokens;
    const pairs = this.pairs;
    for (let i = 0; i < n; i++) tokens[i] = this.bytes[utf8[i]!]!;
    for (let i = 0; i < n - 1; i++) pairs[i] = this.find(tokens[i]!, tokens[i + 1]!);
    while (n > 1) {
      let at = -1;
      let best = 0x7fffffff;
      for (let i = 0; i < n - 1; i++) {
        const slot = pairs[i]!;
        if (slot >= 0 && this.rank[slot]! < best) {
          best = this.rank[slot]!;
          at = i;
        }
      }
      if (at < 0) break;
      tokens[at] = this.made[pairs[at]!]!;
      tokens.copyWithin(at + 1, at + 2, n);
      pairs.copyWithin(at + 1, at + 2, n - 1);
      n--;
      if (at > 0) pairs[at - 1] = this.find(tokens[at - 1]!, tokens[at]!);
      if (at < n - 1) pairs[at] = this.find(tokens[at]!, tokens[at + 1]!);
    }
    for (let i = 0; i < n; i++) out.push(tokens[i]!);
  }

  private add(left: number, right: number, rank: number, made: number): void {
    const slot = this.slot(left, right);
    this.left[slot] = left; // a repeated pair takes its last rank, as the library's map does
    this.right[slot] = right;
    this.rank[slot] = rank;
    this.made[slot] = made;
  }

  /** The pair's slot, or −1 when it is not a merge. */
  private find(left: number, right: number): number {
    const slot = this.slot(left, right);
    return this.left[slot] === -1 ? -1 : slot;
  }

  /** The pair's slot if present, else the empty slot where it would go (linear probing). */
  private slot(left: number, right: number): number {
    let slot = (Math.imul(left, 0x9e3779b1) ^ Math.imul(right + 0x632be5ab, 0x85ebca77)) & this.mask;
    while (this.left[slot] !== -1 && (this.left[slot] !== left || this.right[slot] !== right))
      slot = (slot + 1) & this.mask;
    return slot;
  }
}
