/**
 * The multimodal items of an OpenAI chat request (image, video and audio content parts), as llm-d's
 * multimodal plugins see them: the encode decider asks whether there are any, the encoder-cache
 * producer keys each distinct item by a hash of its content reference (URL, data URL or audio data).
 */
import { createHash } from "node:crypto";

/** OpenAI chat content-part types that need an encoder (llm-d's list). */
export const MULTIMODAL_PART_TYPES: ReadonlySet<string> = new Set(["image_url", "video_url", "input_audio"]);

/** One distinct media item of a request. */
export interface MultimodalItem {
  /** Hex SHA-256 of the modality and the item's content reference. */
  hash: string;
  modality: "image" | "video" | "audio";
}

type Part = Record<string, unknown>;

/** The object parts of the chat messages' content arrays, in order (none for string contents). */
function* contentParts(body: Readonly<Record<string, unknown>>): Generator<Part> {
  const messages = body.messages;
  if (!Array.isArray(messages)) return;
  for (const message of messages) {
    const content = (message as { content?: unknown } | null)?.content;
    if (!Array.isArray(content)) continue;
    for (const part of content) if (part !== null && typeof part === "object") yield part as Part;
  }
}

/** True when any chat message's content array holds a multimodal part (stops at the first). */
export function isMultimodal(body: Readonly<Record<string, unknown>>): boolean {
  for (const part of contentParts(body)) if (MULTIMODAL_PART_TYPES.has(part.type as string)) return true;
  return false;
}

/** `{url}` or a bare string, as clients send `image_url` and `video_url`. */
function urlOf(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  const url = (value as { url?: unknown } | null)?.url;
  return typeof url === "string" ? url : undefined;
}

function reference(part: Part): [MultimodalItem["modality"], string] | undefined {
  switch (part.type) {
    case "image_url": {
      const url = urlOf(part.image_url);
      return url === undefined ? undefined : ["image", url];
    }
    case "video_url": {
      const url = urlOf(part.video_url);
      return url === undefined ? undefined : ["video", url];
    }
    case "input_audio": {
      const audio = part.input_audio as { data?: unknown; format?: unknown } | null;
      return typeof audio?.data === "string" ? ["audio", `${String(audio.format)}:${audio.data}`] : undefined;
    }
    default:
      return undefined;
  }
}

/** The request's distinct media items, in first-seen order (an item sent twice counts once). */
export function multimodalItems(body: Readonly<Record<string, unknown>>): MultimodalItem[] {
  const items = new Map<string, MultimodalItem>();
  for (const part of contentParts(body)) {
    const ref = reference(part);
    if (!ref) continue;
    const [modality, content] = ref;
    const hash = createHash("sha256").update(modality).update("\0").update(content).digest("hex");
    if (!items.has(hash)) items.set(hash, { hash, modality });
  }
  return [...items.values()];
}
