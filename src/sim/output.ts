/**
 * What the simulator answers: the output text and its token count, decided before the request
 * enters the engine (the engine only counts tokens). The text is made of the server tokenizer's
 * token pieces: random-mode prose is pieces of which every run re-encodes to one token each, so a
 * client that tokenizes the output with the same tokenizer counts `completion_tokens`.
 *
 * Length rule:
 *  - limit = `max_tokens`, else `max-model-len − prompt` for chat and at most 16 of that for
 *    completions (vLLM's defaults);
 *  - `ignore_eos`: exactly `limit` tokens (finish `length`); an echo's text repeats to fill;
 *  - echo mode: the echo text's tokens cut to `limit` (finish `length` when cut, else `stop`);
 *  - random mode: with probability 1/2 `limit` tokens (finish `length`), else uniform in 1…limit−1
 *    (finish `stop`), drawn from the server's seeded generator;
 *  - a stop string cuts the text before it (finish `stop`); the tokens that produced it still count.
 */
import type { FinishReason, GenerationRequest } from "../api/openai.ts";
import { seededRandom } from "../core/random.ts";
import type { ChatTokenizer } from "../tokenizer/chat.ts";

/** The decided answer to one request. */
export interface PlannedOutput {
  /** Tokens the engine must generate (>= 1). */
  tokens: number;
  text: string;
  finishReason: FinishReason;
  /** Where each token's text ends in `text` (at most `text.length`: a stop string cuts it). */
  ends: readonly number[];
}

/** Default `max_tokens` of `/v1/completions` when absent (vLLM's). */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;

const SENTENCES = [
  "The cache keeps the longest shared prefix warm. ",
  "Routers weigh queue depth against reuse of computed blocks. ",
  "A batch step decodes every running sequence once. ",
  "Prefill is compute bound while decode is bound by memory bandwidth. ",
  "Fair queuing lets every tenant make progress under load. ",
  "Each block holds a fixed number of token states. ",
  "Evicting the least recently used block frees room for new work. ",
  "Streaming returns tokens as soon as they are produced. ",
];

const CORPUS_CHARS = 1 << 16;

/** Plans outputs for one server: owns the seeded generator and the random-mode prose. */
export class OutputPlanner {
  private readonly random: () => number;
  private readonly prose: readonly string[];

  constructor(
    private readonly mode: "echo" | "random",
    seed: number,
    private readonly maxModelLen: number,
    private readonly tokenizer: ChatTokenizer,
  ) {
    this.random = seededRandom(seed);
    let corpus = "";
    while (corpus.length < CORPUS_CHARS) corpus += SENTENCES[Math.floor(this.random() * SENTENCES.length)];
    this.prose = tokenizer.prosePieces(corpus);
  }

  /** The answer to `req` whose prompt has `promptTokens` tokens (already checked to fit the context). */
  plan(req: GenerationRequest, promptTokens: number): PlannedOutput {
    const limit = this.limit(req, promptTokens);
    const echo = this.mode === "echo" && req.echoText !== "" ? this.tokenizer.pieces(req.echoText) : null;
    const natural = echo ? echo.length : this.randomLength(limit);
    let tokens = req.ignoreEos ? limit : Math.min(natural, limit);
    let finishReason: FinishReason = req.ignoreEos || natural >= limit ? "length" : "stop";
    const pieces = echo
      ? this.repeated(req.echoText, echo, tokens)
      : cycle(this.prose, Math.floor(this.random() * this.prose.length), tokens);
    let text = pieces.join("");
    const ends = pieceEnds(pieces);
    const cut = earliestStop(text, req.stop);
    if (cut) {
      text = text.slice(0, cut.at);
      tokens = Math.min(tokens, tokensCovering(ends, cut.end));
      finishReason = "stop";
    }
    return { tokens, text, finishReason, ends };
  }

  /** Most tokens the request may generate. */
  limit(req: GenerationRequest, promptTokens: number): number {
    const room = this.maxModelLen - promptTokens;
    const fallback = req.kind === "completion" ? Math.min(DEFAULT_COMPLETION_MAX_TOKENS, room) : room;
    return Math.max(1, req.maxTokens ?? fallback);
  }

  /** The first `tokens` pieces of `text` repeated, given the pieces of one copy. */
  private repeated(text: string, once: string[], tokens: number): string[] {
    let pieces = once;
    for (let copies = 1; pieces.length < tokens; ) {
      copies = Math.max(copies * 2, Math.ceil(tokens / once.length));
      pieces = this.tokenizer.pieces(text.repeat(copies));
    }
    return pieces.length === tokens ? pieces : pieces.slice(0, tokens);
  }

  private randomLength(limit: number): number {
    if (limit <= 1 || this.random() < 0.5) return limit;
    return 1 + Math.floor(this.random() * (limit - 1));
  }
}

/** `count` pieces of `pieces` from `start`, wrapping around. */
function cycle(pieces: readonly string[], start: number, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(pieces[(start + i) % pieces.length]!);
  return out;
}

/** The end offset of each piece in their concatenation. */
function pieceEnds(pieces: readonly string[]): number[] {
  const ends: number[] = [];
  let at = 0;
  for (const piece of pieces) {
    at += piece.length;
    ends.push(at);
  }
  return ends;
}

/** How many tokens it takes to produce the text up to `end` (at least 1). */
function tokensCovering(ends: readonly number[], end: number): number {
  let tokens = 1;
  while (tokens < ends.length && ends[tokens - 1]! < end) tokens++;
  return tokens;
}

/** Earliest stop-string match: where the text is cut and where the match ends. */
function earliestStop(text: string, stops: readonly string[]): { at: number; end: number } | null {
  let best: { at: number; end: number } | null = null;
  for (const stop of stops) {
    const at = text.indexOf(stop);
    if (at >= 0 && (best === null || at < best.at)) best = { at, end: at + stop.length };
  }
  return best;
}

/** The text of output tokens `from` (inclusive) to `to` (exclusive); "" past a stop-string cut. */
export function tokensText(output: PlannedOutput, from: number, to: number): string {
  const start = from === 0 ? 0 : output.ends[from - 1]!;
  return to === 0 ? "" : output.text.slice(start, output.ends[to - 1]);
}
