/**
 * What the simulator answers: the output text and its token count, decided before the request
 * enters the engine (the engine only counts tokens). Tokens are the built-in tokenizer's 4-character
 * chunks, so `completion_tokens` matches what `/tokenize` would count for the text.
 *
 * Length rule:
 *  - limit = `max_tokens`, else `max-model-len − prompt` for chat and at most 16 of that for
 *    completions (vLLM's defaults);
 *  - `ignore_eos`: exactly `limit` tokens (finish `length`);
 *  - echo mode: the echo text cut to `limit` (finish `length` when cut, else `stop`);
 *  - random mode: with probability 1/2 `limit` tokens (finish `length`), else uniform in 1…limit−1
 *    (finish `stop`), drawn from the server's seeded generator;
 *  - a stop string cuts the text before it (finish `stop`); the tokens that produced it still count.
 */
import type { FinishReason, GenerationRequest } from "../api/openai.ts";
import { seededRandom } from "../core/random.ts";
import { CHARS_PER_TOKEN } from "../tokenizer/tokenizer.ts";

/** The decided answer to one request. */
export interface PlannedOutput {
  /** Tokens the engine must generate (>= 1). */
  tokens: number;
  text: string;
  finishReason: FinishReason;
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

/** Plans outputs for one server: owns the seeded generator and the random-mode corpus. */
export class OutputPlanner {
  private readonly random: () => number;
  private readonly corpus: string;

  constructor(
    private readonly mode: "echo" | "random",
    seed: number,
    private readonly maxModelLen: number,
  ) {
    this.random = seededRandom(seed);
    let corpus = "";
    while (corpus.length < CORPUS_CHARS) corpus += SENTENCES[Math.floor(this.random() * SENTENCES.length)];
    this.corpus = corpus;
  }

  /** The answer to `req` whose prompt has `promptTokens` tokens (already checked to fit the context). */
  plan(req: GenerationRequest, promptTokens: number): PlannedOutput {
    const limit = this.limit(req, promptTokens);
    const echo = this.mode === "echo" && req.echoText !== "";
    const natural = echo ? Math.ceil(req.echoText.length / CHARS_PER_TOKEN) : this.randomLength(limit);
    let tokens = req.ignoreEos ? limit : Math.min(natural, limit);
    let finishReason: FinishReason = req.ignoreEos || natural >= limit ? "length" : "stop";
    const chars = tokens * CHARS_PER_TOKEN;
    // An echo only repeats itself when told to ignore EOS; otherwise it ends with the echoed text.
    let text = !echo
      ? this.randomText(chars)
      : repeatTo(req.echoText, req.ignoreEos ? chars : Math.min(chars, req.echoText.length));
    const cut = earliestStop(text, req.stop);
    if (cut) {
      text = text.slice(0, cut.at);
      tokens = Math.min(tokens, Math.max(1, Math.ceil(cut.end / CHARS_PER_TOKEN)));
      finishReason = "stop";
    }
    return { tokens, text, finishReason };
  }

  /** Most tokens the request may generate. */
  limit(req: GenerationRequest, promptTokens: number): number {
    const room = this.maxModelLen - promptTokens;
    const fallback = req.kind === "completion" ? Math.min(DEFAULT_COMPLETION_MAX_TOKENS, room) : room;
    return Math.max(1, req.maxTokens ?? fallback);
  }

  private randomLength(limit: number): number {
    if (limit <= 1 || this.random() < 0.5) return limit;
    return 1 + Math.floor(this.random() * (limit - 1));
  }

  private randomText(chars: number): string {
    const start = Math.floor(this.random() * this.corpus.length);
    if (start + chars <= this.corpus.length) return this.corpus.slice(start, start + chars);
    const rotated = this.corpus.slice(start) + this.corpus.slice(0, start);
    return repeatTo(rotated, chars);
  }
}

/** `text` repeated or cut to exactly `chars` characters. */
function repeatTo(text: string, chars: number): string {
  if (text.length >= chars) return text.slice(0, chars);
  return text.repeat(Math.ceil(chars / text.length)).slice(0, chars);
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
  return output.text.slice(from * CHARS_PER_TOKEN, to * CHARS_PER_TOKEN);
}
