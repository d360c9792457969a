/**
 * The one rendering of chat messages into prompt text, shared by the simulator (which tokenizes
 * it) and the router (which hashes it), so both see exactly the same prefix structure.
 * Like a chat template: each message is `<|role|>\n` + its text + `\n`, then `<|assistant|>\n`.
 */
export interface ChatMessageLike {
  role: string;
  content?: unknown;
}

/** Text of an OpenAI message `content`: a string, or the `text` of its text parts, joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let text = "";
  for (const part of content) {
    if (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string") {
      text += (part as { text: string }).text;
    }
  }
  return text;
}

/**
 * The chat prompt as the pieces `renderChat` concatenates, in order. Each message's text stays
 * the string JSON.parse made, so a reader that can consume pieces (the router's prefix hasher)
 * never pays for copying an 800 KB concatenation flat.
 */
export function renderChatParts(messages: readonly ChatMessageLike[]): string[] {
  const parts: string[] = [];
  for (const m of messages) parts.push(`<|${m.role}|>\n`, contentText(m.content), "\n");
  parts.push("<|assistant|>\n");
  return parts;
}

/** Prompt text for a chat request: the concatenation of `renderChatParts`. */
export function renderChat(messages: readonly ChatMessageLike[]): string {
  let text = "";
  for (const part of renderChatParts(messages)) text += part;
  return text;
}
