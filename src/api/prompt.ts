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

/** Prompt text for a chat request. */
export function renderChat(messages: readonly ChatMessageLike[]): string {
  let text = "";
  for (const m of messages) text += `<|${m.role}|>\n${contentText(m.content)}\n`;
  return `${text}<|assistant|>\n`;
}
