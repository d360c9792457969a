/**
 * A model's tokenizer as the simulator and the router need it: plain text, completion prompts and
 * chat prompts (rendered by the model's chat template) to token ids, and the token pieces the
 * simulator's output text is made of.
 */
import { type ChatMessageLike, contentText } from "../api/prompt.ts";
import { idsLength } from "./conversation-ids.ts";
import type { Tokenizer } from "./tokenizer.ts";

/** A chat message as a template reads it: its role and its text content. */
export interface MessageText {
  readonly role: string;
  readonly text: string;
}

/**
 * A model's chat template, segment by segment as `ChatTokenizer.chatSegments` describes. A
 * message's segment depends only on its role, its text and its position, which is what lets a
 * caller keep a conversation's segment ids from one turn to the next.
 */
export interface ChatTemplate {
  /** The segment of the message at `index`. */
  segment(message: MessageText, index: number): string;
  /** The segment after the last message: the generation prompt. */
  readonly end: string;
}

/** The role and text of each message. */
export function messageTexts(messages: readonly ChatMessageLike[]): MessageText[] {
  return messages.map((m) => ({ role: m.role, text: contentText(m.content) }));
}

/** The chat prompt as `template`'s segments: one per message, then its end. */
export function renderSegments(template: ChatTemplate, messages: readonly ChatMessageLike[]): string[] {
  const segments = messageTexts(messages).map((m, i) => template.segment(m, i));
  segments.push(template.end);
  return segments;
}

/** A tokenizer with its model's prompt conventions. `encode` adds no special tokens. */
export interface ChatTokenizer extends Tokenizer {
  /**
   * The chat prompt (the model's template, with the generation prompt) as segments whose token ids,
   * encoded one by one and concatenated, equal the ids of the whole prompt: each segment ends where
   * a special token ends, so no BPE merge crosses it. Equal segments have equal ids wherever they
   * occur, which is what lets a caller cache them per message.
   */
  chatSegments(messages: readonly ChatMessageLike[]): string[];
  /** Token ids of a completions prompt as the model server encodes it (with BOS where the model adds one). */
  encodePrompt(text: string): Uint32Array;
  /** The text of each of `text`'s tokens, in order; they concatenate to `text`. */
  pieces(text: string): string[];
  /**
   * `corpus` as one-token pieces of which every consecutive run re-encodes to one token per piece:
   * what the simulator writes, so a client counting its output gets the count it was told.
   */
  prosePieces(corpus: string): string[];
}

/** The ids of the parts one after another. */
function concatIds(parts: readonly Uint32Array[]): Uint32Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint32Array(idsLength(parts));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Token ids of a chat prompt: its segments encoded and concatenated. */
export function encodeChat(tokenizer: ChatTokenizer, messages: readonly ChatMessageLike[]): Uint32Array {
  return concatIds(tokenizer.chatSegments(messages).map((segment) => tokenizer.encode(segment)));
}
