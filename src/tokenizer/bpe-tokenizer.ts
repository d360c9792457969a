/**
 * A Hugging Face `tokenizer.json` tokenizer (byte-level BPE: Llama 3, Qwen, DeepSeek) over
 * `@huggingface/tokenizers`, with the same ids at a fraction of the cost: the text is split at
 * added tokens and by the pre-tokenizer's own pattern here, and each piece's ids come from a word
 * cache, filled once per distinct piece by merges over ids (`BpeMerges`), or by the library's BPE
 * model where those cannot represent it. A self-check at construction compares the result with the
 * library's own `encode`.
 */
import type { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import type { ChatMessageLike } from "../api/prompt.ts";
import { BpeMerges } from "./bpe-merges.ts";
import { byteLevelString, byteLevelUnits } from "./byte-level.ts";
import { type ChatTemplate, type ChatTokenizer, renderSegments } from "./chat.ts";

/** Distinct pieces kept in the word cache before it starts over (≈ 50 MB at most). */
const WORD_CACHE_ENTRIES = 500_000;

const SELF_CHECK =
  "Hello, world! It's 2026: naïve café ∑ 12345 \u{1F600}\n\n  indented\tcode() {}  <|eot_id|> done.";

/** The library's pre-tokenizer, narrowed to the part read here: its split pattern. */
interface SplitPreTokenizer {
  tokenizers?: { pattern?: unknown }[];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A byte-level BPE tokenizer with a chat template. */
export class BpeTokenizer implements ChatTokenizer {
  private readonly words = new Map<string, number | number[]>();
  private readonly addedIds = new Map<string, number>();
  private readonly added: RegExp;
  private readonly split: RegExp;
  private readonly promptPrefix: number[];
  private readonly promptSuffix: number[];
  private readonly model: NonNullable<HfTokenizer["model"]>;
  /** The model's merges over ids (null: a model only the library can run). */
  private readonly merges: BpeMerges | null;

  constructor(
    readonly name: string,
    private readonly lib: HfTokenizer,
    private readonly template: ChatTemplate,
  ) {
    if (!lib.model) throw new Error(`${name}: tokenizer.json has no model`);
    this.model = lib.model;
    this.merges = fastMerges(lib.model);
    for (const [id, token] of lib.get_added_tokens_decoder()) {
      if (token.lstrip || token.rstrip)
        throw new Error(`${name}: added token ${token.content} strips spaces`);
      this.addedIds.set(token.content, id);
    }
    const contents = [...this.addedIds.keys()].sort((a, b) => b.length - a.length);
    this.added = new RegExp(contents.map(escapeRegExp).join("|"), "g");
    this.split = splitPattern(name, lib);
    [this.promptPrefix, this.promptSuffix] = promptAffixes(lib);
    const expected = lib.encode(SELF_CHECK, { add_special_tokens: false }).ids.join();
    if (Array.from(this.encode(SELF_CHECK)).join() !== expected) {
      throw new Error(`${name}: the fast path disagrees with @huggingface/tokenizers`);
    }
  }

  encode(text: string): Uint32Array {
    const out: number[] = [];
    let from = 0;
    this.added.lastIndex = 0;
    for (let m = this.added.exec(text); m !== null; m = this.added.exec(text)) {
      this.encodeOrdinary(text.slice(from, m.index), out);
      out.push(this.addedIds.get(m[0])!);
      from = m.index + m[0].length;
    }
    this.encodeOrdinary(from === 0 ? text : text.slice(from), out);
    return Uint32Array.from(out);
  }

  count(text: string): number {
    return this.encode(text).length;
  }

  encodePrompt(text: string): Uint32Array {
    if (this.promptPrefix.length === 0 && this.promptSuffix.length === 0) return this.encode(text);
    return Uint32Array.from([...this.promptPrefix, ...this.encode(text), ...this.promptSuffix]);
  }

  chatSegments(messages: readonly ChatMessageLike[]): string[] {
    return renderSegments(this.template, messages);
  }

  pieces(text: string): string[] {
    const pieces: string[] = [];
    let at = 0;
    for (const id of this.encode(text)) {
      const token = this.lib.id_to_token(id) ?? "";
      const units = this.addedIds.has(token) ? token.length : (byteLevelUnits(token) ?? token.length);
      pieces.push(text.slice(at, at + units));
      at += units;
    }
    if (at < text.length && pieces.length > 0) pieces[pieces.length - 1] += text.slice(at);
    return pieces;
  }

  prosePieces(corpus: string): string[] {
    const pieces: string[] = [];
    for (const word of corpus.split(/\s+/)) {
      const piece = ` ${word.replace(/[^\p{L}]/gu, "")}`;
      if (piece.length > 1 && this.count(piece) === 1) pieces.push(piece);
    }
    return pieces;
  }

  /**
   * Appends the ids of text that holds no added token: pre-tokenizer pieces, each from the cache.
   * The pieces come from one `match` call (about half the cost of an `exec` per piece); byte-level
   * BPE patterns match every character (letters, numbers, white space, and a class for the rest),
   * so the pieces cover the text, which is checked.
   */
  private encodeOrdinary(text: string, out: number[]): void {
    if (text === "") return;
    let covered = 0;
    for (const piece of text.match(this.split) ?? []) {
      covered += piece.length;
      if (piece !== "") this.encodeWord(piece, out);
    }
    if (covered !== text.length)
      throw new Error(`${this.name}: the pre-tokenizer pattern left text unmatched`);
  }

  private encodeWord(word: string, out: number[]): void {
    const ids = this.words.get(word) ?? this.learnWord(word);
    if (typeof ids === "number") out.push(ids);
    else for (const id of ids) out.push(id);
  }

  /**
   * The ids of one pre-tokenizer piece, remembered: the merges over ids, else the library's BPE
   * model over the piece's byte-level string (its full `encode` costs far more per call), or its
   * `encode` when a merged token is not in the vocabulary.
   */
  private learnWord(word: string): number | number[] {
    const encoded = this.mergeWord(word);
    const ids = encoded.length === 1 ? encoded[0]! : encoded;
    if (this.words.size >= WORD_CACHE_ENTRIES) this.words.clear();
    this.words.set(word, ids);
    return ids;
  }

  private mergeWord(word: string): number[] {
    let encoded: number[] = [];
    if (this.merges) {
      this.merges.encode(word, encoded);
      return encoded;
    }
    const vocab = this.model.tokens_to_ids;
    for (const token of this.model.encode([byteLevelString(word)])) {
      const id = vocab.get(token);
      if (id === undefined) {
        encoded = this.lib.encode(word, { add_special_tokens: false }).ids;
        break;
      }
      encoded.push(id);
    }
    return encoded;
  }
}

/** The library's BPE model, narrowed to what `BpeMerges` reads. */
interface BpeModelFields {
  merges?: unknown;
  ignore_merges?: unknown;
  end_of_word_suffix?: unknown;
  continuing_subword_suffix?: unknown;
  byte_fallback?: unknown;
}

/** Merges over ids for a plain byte-level BPE model (no suffixes, no byte fallback), else null. */
function fastMerges(model: NonNullable<HfTokenizer["model"]>): BpeMerges | null {
  const fields = model as unknown as BpeModelFields;
  const plain = !fields.end_of_word_suffix && !fields.continuing_subword_suffix && !fields.byte_fallback;
  if (!plain || !Array.isArray(fields.merges)) return null;
  return BpeMerges.of(
    fields.merges as [string, string][],
    model.tokens_to_ids,
    fields.ignore_merges === true,
  );
}

/** The pre-tokenizer's split pattern (the library's translation of the Oniguruma regex). */
function splitPattern(name: string, lib: HfTokenizer): RegExp {
  const pattern = (lib.pre_tokenizer as SplitPreTokenizer | null)?.tokenizers?.[0]?.pattern;
  if (!(pattern instanceof RegExp)) throw new Error(`${name}: no Split pre-tokenizer pattern`);
  return new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
}

/** The ids the post-processor puts before and after a single sequence (Llama 3: BOS before). */
function promptAffixes(lib: HfTokenizer): [number[], number[]] {
  const plain = lib.encode("x", { add_special_tokens: false }).ids;
  const full = lib.encode("x").ids;
  const at = full.indexOf(plain[0]!);
  return [full.slice(0, at), full.slice(at + plain.length)];
}
