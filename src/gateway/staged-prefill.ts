/**
 * The gateway's host of `staged-prefill` plans: before the request itself, its endpoint gets the
 * prompt's leading part up to each cut as a request for one token, one after another. Each stage
 * finds the one before in the endpoint's prefix cache and prefills only its own tokens; what
 * arrived at the endpoint meanwhile runs between stages. A stage is a hint: whatever it comes to
 * (an error, no answer), the request is forwarded as it is.
 *
 * A prompt whose ids the router knows is staged as those ids. A completions prompt of text is
 * staged as its text up to the space nearest below the cut's share of it: the model server's
 * tokens of that text are the prompt's own up to there, whatever its tokenizer. A chat is staged
 * as its leading messages without the generation prompt, which the server's template renders as
 * the start of the whole chat.
 */
import { Readable } from "node:stream";
import type { Dispatcher } from "undici";
import type { TextPiece } from "../api/prompt.ts";
import type { StagedPrefill } from "../scheduler/framework/data-keys.ts";

/** The body of each stage, given its cut in the plan's tokens (cuts ascending), and where it goes. */
export interface StageBodies {
  readonly path: string;
  upTo(cut: number): Promise<readonly Buffer[]>;
}

/** What every stage body shares. */
export interface StageModel {
  /** The model (or adapter) as forwarded: stages must share the request's cache. */
  model: string;
  /** The body's `cache_salt`, if any (vLLM keeps salted prefixes apart). */
  cacheSalt: string | undefined;
}

/** One request's stages. */
export interface StagedPrefillRequest {
  bodies: StageBodies;
  cuts: readonly number[];
  headers: Readonly<Record<string, string>>;
  /** Stops the stages (the client left, eviction, drain). */
  signal: AbortSignal;
}

/** The stages answered with 2xx, sent until the first that did not or the signal; never rejects. */
export async function sendStages(dispatcher: Dispatcher, request: StagedPrefillRequest): Promise<number> {
  const { "content-length": _length, ...headers } = request.headers;
  const requestId = headers["x-request-id"] ?? "";
  let answered = 0;
  for (const cut of request.cuts) {
    const body = await request.bodies.upTo(cut);
    if (request.signal.aborted) break;
    try {
      const response = await dispatcher.request({
        path: request.bodies.path,
        method: "POST",
        headers: {
          ...headers,
          "content-type": "application/json",
          "content-length": String(bodyLength(body)),
          "x-request-id": `${requestId}-stage-${answered}`,
        },
        body: Readable.from(body, { objectMode: false }),
        signal: request.signal,
      });
      await response.body.dump();
      if (response.statusCode < 200 || response.statusCode >= 300) break;
      answered++;
    } catch {
      break;
    }
  }
  return answered;
}

/** Bytes of a body given as pieces. */
export function bodyLength(pieces: readonly Buffer[]): number {
  let length = 0;
  for (const piece of pieces) length += piece.length;
  return length;
}

const COMPLETIONS = "/v1/completions";

/** `{"model":…[,"cache_salt":…],"max_tokens":1,"stream":false,"prompt":` */
function bodyHead({ model, cacheSalt }: StageModel): Buffer {
  const salt = cacheSalt === undefined ? "" : `,"cache_salt":${JSON.stringify(cacheSalt)}`;
  return Buffer.from(`{"model":${JSON.stringify(model)}${salt},"max_tokens":1,"stream":false,"prompt":`);
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Ids written between two yields to the event loop (≈ 0.1–0.2 ms of digits). */
const IDS_PER_SLICE = 8_192;
/** The most bytes one id takes in the list: ten digits and a comma. */
const MAX_ID_BYTES = 11;
const IDS_OPEN = Buffer.from("[");
const IDS_CLOSE = Buffer.from("]}");

/**
 * Stage bodies of a prompt of known ids: `"prompt":[ids up to the cut]`. Each stage's ids are the
 * last one's and more, so the digits are written once, into one buffer, a slice of ids per
 * event-loop turn: a 200K-token prompt's million bytes of digits never block the loop at once.
 */
export class IdStageBodies implements StageBodies {
  readonly path = COMPLETIONS;
  private readonly head: Buffer;
  private readonly digits: Buffer;
  private ids = 0;
  private bytes = 0;

  constructor(
    model: StageModel,
    private readonly tokens: Uint32Array,
    lastCut: number,
  ) {
    this.head = Buffer.concat([bodyHead(model), IDS_OPEN]);
    this.digits = Buffer.allocUnsafe(lastCut * MAX_ID_BYTES);
  }

  /**
   * The body of the stage ending at `cut` (at most the last cut, not below an earlier call's), as
   * its pieces: views of the written digits, not a copy.
   */
  async upTo(cut: number): Promise<readonly Buffer[]> {
    while (this.writeSlice(cut)) await nextTurn();
    return [this.head, this.digits.subarray(0, this.bytes), IDS_CLOSE];
  }

  /** Writes the next slice of ids towards `cut`; true while some remain. */
  writeSlice(cut: number): boolean {
    if (this.ids >= cut) return false;
    const end = Math.min(cut, this.ids + IDS_PER_SLICE);
    const { digits, tokens } = this;
    let at = this.bytes;
    for (let i = this.ids; i < end; i++) {
      if (i > 0) digits[at++] = 44; // ","
      at = writeDecimal(digits, at, tokens[i]!);
    }
    this.ids = end;
    this.bytes = at;
    return end < cut;
  }
}

/** Characters escaped between two yields to the event loop. */
const CHARS_PER_SLICE = 65_536;
/** How far below a cut's share of the text a stage looks for a space to end at. */
const SPACE_SEARCH = 4_096;
const TEXT_CLOSE = Buffer.from('"}');
const QUOTE = Buffer.from('"');

/**
 * Stage bodies of a completions prompt of text, `"prompt":"text up to the cut"`: the cut's share
 * of the plan's `tokens` is taken of the text and moved down to the nearest space. A prompt the
 * body carried as plain ASCII bytes is sent as views of them; a string is JSON-escaped a slice per
 * event-loop turn, once (each stage's text is the last one's and more).
 */
export class TextStageBodies implements StageBodies {
  readonly path = COMPLETIONS;
  private readonly head: Buffer;
  private readonly escaped: Buffer[] = [];
  private chars = 0;

  constructor(
    model: StageModel,
    private readonly text: TextPiece,
    private readonly tokens: number,
  ) {
    this.head = Buffer.concat([bodyHead(model), QUOTE]);
  }

  async upTo(cut: number): Promise<readonly Buffer[]> {
    const end = this.endOf(cut);
    const { text } = this;
    if (typeof text !== "string")
      return [this.head, Buffer.from(text.buffer, text.byteOffset, end), TEXT_CLOSE];
    while (this.chars < end) {
      const stop = Math.min(end, this.chars + CHARS_PER_SLICE);
      this.escaped.push(escaped(text, this.chars, stop));
      this.chars = stop;
      if (this.chars < end) await nextTurn();
    }
    return [this.head, ...this.escaped, TEXT_CLOSE];
  }

  /** Where the stage ending at `cut` ends in the text: at a space, not below the last stage's end. */
  private endOf(cut: number): number {
    const length = this.text.length;
    const share = Math.min(length, Math.floor((cut / this.tokens) * length));
    const floor = Math.max(this.chars, share - SPACE_SEARCH);
    for (let at = share; at > floor; at--) if (codeAt(this.text, at) === 32) return at;
    return Math.max(this.chars, share);
  }
}

/** Body fields a chat stage does not copy: the messages, and what it sets itself. */
const CHAT_STAGE_SETS = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
  "max_tokens",
  "max_completion_tokens",
  "n",
  "add_generation_prompt",
  "continue_final_message",
]);

/**
 * Stage bodies of a chat, `"messages":[the leading messages]` with `add_generation_prompt: false`:
 * the server renders them as the start of the chat's prompt. The body's other fields are copied,
 * among them what can change the rendering (tools, a chat template and its arguments) and
 * `cache_salt`.
 * Each message is serialised once, about a slice of text per event-loop turn (each stage's
 * messages are the last one's and more); a message's long strings are escaped a slice at a time.
 */
export class ChatStageBodies implements StageBodies {
  readonly path = "/v1/chat/completions";
  private readonly head: Buffer;
  private readonly messages: readonly unknown[];
  /** The written messages' pieces, commas between them. */
  private readonly serialised: Buffer[] = [];
  /** Where each written message's pieces end in `serialised`. */
  private readonly ends: number[] = [];
  /** Code units written since the last yield to the event loop. */
  private turnUnits = 0;

  constructor(
    model: string,
    body: Readonly<Record<string, unknown>>,
    private readonly plan: Pick<StagedPrefill, "cuts" | "messages">,
  ) {
    this.messages = body.messages as unknown[];
    let head = `{"model":${JSON.stringify(model)}`;
    for (const [key, value] of Object.entries(body))
      if (!CHAT_STAGE_SETS.has(key) && value !== undefined)
        head += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
    this.head = Buffer.from(
      `${head},"max_tokens":1,"stream":false,"add_generation_prompt":false,"messages":[`,
    );
  }

  async upTo(cut: number): Promise<readonly Buffer[]> {
    const count = this.plan.messages![this.plan.cuts.indexOf(cut)]!;
    this.turnUnits = 0;
    while (this.ends.length < count) {
      if (this.ends.length > 0) this.serialised.push(COMMA);
      const { frame, long } = framed(this.messages[this.ends.length]);
      for (let i = 0; i < frame.length; i++) {
        await this.spend(frame[i]!.length);
        this.serialised.push(Buffer.from(frame[i]!));
        if (long[i] !== undefined) await this.writeEscaped(long[i]!);
      }
      this.ends.push(this.serialised.length);
    }
    return [this.head, ...this.serialised.slice(0, this.ends[count - 1]), CHAT_CLOSE];
  }

  /** `"text"`, escaped a slice at a time. */
  private async writeEscaped(text: string): Promise<void> {
    this.serialised.push(QUOTE);
    for (let at = 0; at < text.length; at += CHARS_PER_SLICE) {
      const stop = Math.min(text.length, at + CHARS_PER_SLICE);
      await this.spend(stop - at);
      this.serialised.push(escaped(text, at, stop));
    }
    this.serialised.push(QUOTE);
  }

  /** Counts `units` into this turn, first yielding to the event loop if they would take it past a slice. */
  private async spend(units: number): Promise<void> {
    if (this.turnUnits > 0 && this.turnUnits + units > CHARS_PER_SLICE) {
      this.turnUnits = 0;
      await nextTurn();
    }
    this.turnUnits += units;
  }
}

/** Strings longer than this are escaped apart from their message's frame, in slices. */
const LONG_STRING = 4_096;
/** What a long string of a message is serialised as until its slices take its place. */
const LONG_MARK = "\u0000llmd-long-string\u0000";
const LONG_MARK_JSON = JSON.stringify(LONG_MARK);

/**
 * `message` as JSON with every string of over 4,096 code units left out: `frame[i]` is followed by
 * `long[i]`, to be escaped a slice at a time (content strings, text parts, tool results alike).
 * A message whose own text holds the mark is serialised whole.
 */
function framed(message: unknown): { frame: string[]; long: string[] } {
  const long: string[] = [];
  const json = JSON.stringify(message, (_key, value) => {
    if (typeof value !== "string" || value.length <= LONG_STRING) return value;
    long.push(value);
    return LONG_MARK;
  });
  const frame = json.split(LONG_MARK_JSON);
  return frame.length === long.length + 1 ? { frame, long } : { frame: [JSON.stringify(message)], long: [] };
}

const COMMA = Buffer.from(",");
const CHAT_CLOSE = Buffer.from("]}");

/** Code units `[from, to)` of `text` JSON-escaped, without the quotes (a surrogate pair split by a slice is escaped as its halves). */
function escaped(text: string, from: number, to: number): Buffer {
  return Buffer.from(JSON.stringify(text.slice(from, to)).slice(1, -1));
}

function codeAt(text: TextPiece, at: number): number {
  return typeof text === "string" ? text.charCodeAt(at) : text[at]!;
}

/** `0`…`9999` in ASCII: each entry is its digit count, then up to four digits. */
const SMALL = new Uint8Array(10_000 * 5);
/** `0000`…`9999`, four zero-padded ASCII digits each. */
const PADDED = new Uint8Array(10_000 * 4);
for (let n = 0; n < 10_000; n++) {
  const text = String(n);
  SMALL[n * 5] = text.length;
  for (let k = 0; k < text.length; k++) SMALL[n * 5 + 1 + k] = text.charCodeAt(k);
  const padded = text.padStart(4, "0");
  for (let k = 0; k < 4; k++) PADDED[n * 4 + k] = padded.charCodeAt(k);
}

/** Writes `value` (an integer in [0, 2^32)) in decimal at `at`; returns the offset after it. */
function writeDecimal(out: Uint8Array, at: number, value: number): number {
  if (value < 10_000) {
    const length = SMALL[value * 5]!;
    for (let k = 0; k < length; k++) out[at + k] = SMALL[value * 5 + 1 + k]!;
    return at + length;
  }
  const high = Math.floor(value / 10_000);
  const low = value - high * 10_000;
  at = writeDecimal(out, at, high);
  const from = low * 4;
  out[at] = PADDED[from]!;
  out[at + 1] = PADDED[from + 1]!;
  out[at + 2] = PADDED[from + 2]!;
  out[at + 3] = PADDED[from + 3]!;
  return at + 4;
}
