/**
 * The one rendering of chat messages into prompt text, shared by the simulator (which tokenizes
 * it) and the router (which hashes it), so both see exactly the same prefix structure.
 * Like a chat template: each message is `<|role|>\n` + its text + `\n`, then `<|assistant|>\n`.
 */
export interface ChatMessageLike {
  role: string;
  content?: unknown;
}

/**
 * Pushes each text of an OpenAI message `content` onto `out`, mapped by `piece`: the string, or
 * the `text` of each text part, in order.
 */
function pushContentTexts<P>(content: unknown, piece: (text: string) => P, out: P[]): void {
  if (typeof content === "string") out.push(piece(content));
  if (!Array.isArray(content)) return;
  for (const part of content) {
    if (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string")
      out.push(piece((part as { text: string }).text));
  }
}

const asItIs = (text: string): string => text;

/** Text of an OpenAI message `content`: a string, or the `text` of its text parts, joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  const texts: string[] = [];
  pushContentTexts(content, asItIs, texts);
  let text = "";
  for (const part of texts) text += part;
  return text;
}

/**
 * A piece of prompt text: a string, or ASCII bytes as a request body carried them (one byte is one
 * UTF-16 code unit), which a reader that consumes pieces (the router's prefix hasher) reads
 * without their ever being decoded.
 */
export type TextPiece = string | Uint8Array;

/**
 * The chat prompt as the pieces `renderChat` concatenates, in order: each text of a message's
 * content (its string, or each text part) is its own piece, mapped by `piece` (by default the
 * string JSON.parse made, so a reader that can consume pieces never pays for copying an 800 KB
 * concatenation flat).
 */
export function renderChatParts<P extends TextPiece = string>(
  messages: readonly ChatMessageLike[],
  piece: (text: string) => P | string = asItIs,
  addGenerationPrompt = true,
): (P | string)[] {
  const parts: (P | string)[] = [];
  for (const m of messages) {
    parts.push(chatHeader(m.role));
    pushContentTexts(m.content, piece, parts);
    parts.push(CHAT_MESSAGE_END);
  }
  if (addGenerationPrompt) parts.push(CHAT_GENERATION_PROMPT);
  return parts;
}

/** Code units `renderChat` writes for a message of `role` whose text has `textUnits`: header, text, end. */
export function renderedMessageUnits(role: string, textUnits: number): number {
  return role.length + textUnits + MESSAGE_FRAME_UNITS;
}

/** Code units of an OpenAI message `content`'s text (as `contentText` joins it), without joining it. */
export function contentUnits(content: unknown): number {
  const lengths: number[] = [];
  pushContentTexts(content, (text) => text.length, lengths);
  let units = 0;
  for (const length of lengths) units += length;
  return units;
}

/** What `renderChat` writes before a message's text. */
export function chatHeader(role: string): string {
  return `<|${role}|>\n`;
}

/** What `renderChat` writes after a message's text. */
export const CHAT_MESSAGE_END = "\n";

/** Code units `renderChat` writes around a message besides its role and text. */
const MESSAGE_FRAME_UNITS = chatHeader("").length + CHAT_MESSAGE_END.length;

/** What `renderChat` writes after the last message: the generation prompt. */
export const CHAT_GENERATION_PROMPT = chatHeader("assistant");

/**
 * Prompt text for a chat request: the concatenation of `renderChatParts`. Without the generation
 * prompt (vLLM's `add_generation_prompt: false`) it is a prefix of the text with it.
 */
export function renderChat(messages: readonly ChatMessageLike[], addGenerationPrompt = true): string {
  let text = "";
  for (const part of renderChatParts(messages, asItIs, addGenerationPrompt)) text += part;
  return text;
}
