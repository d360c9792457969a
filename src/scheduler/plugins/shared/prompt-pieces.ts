/**
 * The prompt text to hash, as pieces when that avoids a copy. The gateway's chat `promptText` is
 * `renderChat(messages)`, a lazily concatenated string: the first read of its characters copies
 * it flat (≈ 0.6 ms at 800 KB, with a long tail: a fresh large allocation). Hashing
 * `renderChatParts(messages)` instead reads the message strings JSON.parse made, in place.
 */
import { type ChatMessageLike, renderChatParts } from "../../../api/prompt.ts";
import { hashTextBlocks, heldPrefixBlocks, prefixSeed } from "../../../kv-index/index.ts";
import type { Tokenizer } from "../../../tokenizer/tokenizer.ts";
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

/**
 * The prompt's chained block hashes (first `maxBlocks`), seeded by model and `cache_salt`: of its
 * token ids when a token producer set them (a held conversation's kept keys reused), else of its
 * text in the same block boundaries.
 */
export function promptBlockHashes(
  request: SchedulingRequest,
  blockSizeTokens: number,
  maxBlocks: number,
): Float64Array {
  const salt = typeof request.body.cache_salt === "string" ? request.body.cache_salt : "";
  const seed = prefixSeed(request.model, salt);
  return request.tokens
    ? heldPrefixBlocks(request.tokens, blockSizeTokens, maxBlocks, seed)
    : hashTextBlocks(promptPieces(request), blockSizeTokens, maxBlocks, seed);
}

/** The prompt's token count: its token ids' when set, else `tokenizer`'s estimate of its text. */
export function promptTokenCount(request: SchedulingRequest, tokenizer: Tokenizer): number {
  return request.tokens ? request.tokens.length : tokenizer.count(request.promptText);
}
