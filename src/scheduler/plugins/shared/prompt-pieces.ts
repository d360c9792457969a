/**
 * The prompt text to hash, as pieces when that avoids a copy. The gateway's chat `promptText` is
 * `renderChat(messages)`, a lazily concatenated string: the first read of its characters copies
 * it flat (≈ 0.6 ms at 800 KB, with a long tail: a fresh large allocation). Hashing
 * `renderChatParts(messages)` instead reads the message strings JSON.parse made, in place.
 */
import { type ChatMessageLike, renderChatParts } from "../../../api/prompt.ts";
import { textLength } from "../../../tokenizer/utf16-words.ts";
import type { SchedulingRequest } from "../../framework/types.ts";

const CHAT_PATH = "/v1/chat/completions";

/**
 * `promptText`, or the chat pieces that concatenate to it. The pieces are used only when their
 * total length equals `promptText`'s (an O(1) check that needs no flattening), so a gateway that
 * renders differently falls back to the text itself.
 */
export function promptPieces(request: SchedulingRequest): string | readonly string[] {
  const messages = request.body.messages;
  if (request.path !== CHAT_PATH || !Array.isArray(messages)) return request.promptText;
  const parts = renderChatParts(messages as ChatMessageLike[]);
  return textLength(parts) === request.promptText.length ? parts : request.promptText;
}
