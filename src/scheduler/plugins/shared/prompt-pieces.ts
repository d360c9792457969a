/**
 * The prompt text to hash, as pieces when that avoids a copy or a decode. The gateway hands its
 * prompt over as `promptParts` (a large body's ASCII strings as the body's bytes). Otherwise a chat
 * `promptText` is `renderChat(messages)`, a lazily concatenated string: the first read of its
 * characters copies it flat (≈ 0.6 ms at 800 KB, with a long tail: a fresh large allocation), so
 * `renderChatParts(messages)` is hashed instead, the message strings read in place.
 */
import { type ChatMessageLike, renderChatParts, type TextPiece } from "../../../api/prompt.ts";
import {
  blockCount,
  HASH_LANES,
  hashTextBlocks,
  heldPrefixBlocks,
  prefixSeed,
  resumeTextBlocks,
} from "../../../kv-index/index.ts";
import { CHARS_PER_TOKEN, CharChunkTokenizer, type Tokenizer } from "../../../tokenizer/tokenizer.ts";
import { textLength } from "../../../tokenizer/utf16-words.ts";
import type { SchedulingRequest } from "../../framework/types.ts";

const CHAT_PATH = "/v1/chat/completions";

/**
 * `promptParts` when the host gave them, else `promptText` or the chat pieces that concatenate
 * to it. The chat pieces are used only when their total length equals `promptText`'s (an O(1)
 * check that needs no flattening), so a host that renders differently falls back to the text.
 */
export function promptPieces(request: SchedulingRequest): string | readonly TextPiece[] {
  if (request.promptParts) return request.promptParts;
  const messages = chatMessages(request);
  if (!messages) return request.promptText;
  const parts = renderChatParts(messages);
  return textLength(parts) === request.promptText.length ? parts : request.promptText;
}

/** A chat request's messages (whose `renderChat` its prompt text may be), else null. */
export function chatMessages(request: SchedulingRequest): ChatMessageLike[] | null {
  const messages = request.body.messages;
  return request.path === CHAT_PATH && Array.isArray(messages) ? (messages as ChatMessageLike[]) : null;
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
  const seed = promptSeed(request);
  return request.tokens
    ? heldPrefixBlocks(request.tokens, blockSizeTokens, maxBlocks, seed)
    : hashTextBlocks(promptPieces(request), blockSizeTokens, maxBlocks, seed);
}

/**
 * `promptBlockHashes` of a prompt's text (its token ids not set) to block `blocks`, hashed in two
 * halves with `pause` awaited between them: a long prompt's hashing as two event-loop blocks.
 */
export async function promptTextHashesInHalves(
  request: SchedulingRequest,
  blockSizeTokens: number,
  blocks: number,
  pause: () => Promise<void>,
): Promise<Float64Array> {
  const keys = new Float64Array(blocks);
  const half = blocks >>> 1;
  const lanes = new Int32Array(Math.max(1, half) * HASH_LANES);
  const pieces = promptPieces(request);
  const first = { first: 0, blocks: half, seed: promptSeed(request), keys, lanes, record: true };
  resumeTextBlocks(pieces, blockSizeTokens, first);
  await pause();
  resumeTextBlocks(pieces, blockSizeTokens, { ...first, first: half, blocks, record: false });
  return keys;
}

/** The prefix hashes' seed of a request: its model and `cache_salt`. */
function promptSeed(request: SchedulingRequest): number {
  const salt = typeof request.body.cache_salt === "string" ? request.body.cache_salt : "";
  return prefixSeed(request.model, salt);
}

/**
 * How many blocks `promptBlockHashes(request, blockSizeTokens, maxBlocks)` returns, without
 * hashing: of the token ids when set, else of the text (`blockSizeTokens × 4` code units a block).
 */
export function promptBlockCount(
  request: SchedulingRequest,
  blockSizeTokens: number,
  maxBlocks: number,
): number {
  const units = request.tokens
    ? request.tokens.length
    : Math.ceil(textLength(promptPieces(request)) / CHARS_PER_TOKEN);
  return Math.min(maxBlocks, blockCount(units, blockSizeTokens));
}

/**
 * The prompt's token count: its token ids' when set, else `tokenizer`'s estimate of its text (the
 * built-in stand-in's from the pieces' length alone, so the gateway's prompt is never decoded).
 */
export function promptTokenCount(request: SchedulingRequest, tokenizer: Tokenizer): number {
  if (request.tokens) return request.tokens.length;
  if (request.promptParts && tokenizer instanceof CharChunkTokenizer)
    return Math.ceil(textLength(request.promptParts) / CHARS_PER_TOKEN);
  return tokenizer.count(request.promptText);
}
