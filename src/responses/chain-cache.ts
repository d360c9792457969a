/**
 * Rehydrated chains kept in the router's memory, so a chained turn costs one response lookup and an
 * index-only check instead of re-reading and re-serialising the whole history. An entry holds a
 * chain's items, their chat messages (the prompt the router renders) and the JSON of both (spliced
 * into the upstream body as is). It is used only after the store confirms that the response still
 * exists with the same chain and that every item of it is still stored, so deletions made by any
 * router sharing the store are honoured. Least recently used entries go first beyond `maxBytes`.
 */
import type { ChatMessageLike } from "../api/prompt.ts";
import { itemsToMessages, type ResponseItem } from "../api/responses.ts";

/** A chain in the forms a turn needs. */
export interface CachedChain {
  readonly itemIds: readonly string[];
  readonly items: readonly ResponseItem[];
  readonly messages: readonly ChatMessageLike[];
  /** The messages' JSON, comma-joined (`""` for none). */
  readonly messagesJson: string;
  /** The items' JSON, comma-joined (`""` for none). */
  readonly itemsJson: string;
  /** Approximate memory held, bytes. */
  readonly bytes: number;
}

/** The empty chain. */
export const EMPTY_CHAIN: CachedChain = Object.freeze({
  itemIds: [],
  items: [],
  messages: [],
  messagesJson: "",
  itemsJson: "",
  bytes: 0,
});

const joinJson = (head: string, values: readonly unknown[]): string => {
  if (values.length === 0) return head;
  const tail = values.map((v) => JSON.stringify(v)).join(",");
  return head === "" ? tail : `${head},${tail}`;
};

/** `chain` followed by `items` (with their ids): only the new items are serialised. */
export function extendChain(
  chain: CachedChain,
  ids: readonly string[],
  items: readonly ResponseItem[],
): CachedChain {
  const messages = itemsToMessages(null, items);
  const messagesJson = joinJson(chain.messagesJson, messages);
  const itemsJson = joinJson(chain.itemsJson, items);
  return {
    itemIds: [...chain.itemIds, ...ids],
    items: [...chain.items, ...items],
    messages: [...chain.messages, ...messages],
    messagesJson,
    itemsJson,
    // Strings twice (JSON and parsed text), at two bytes per character.
    bytes: 4 * (messagesJson.length + itemsJson.length),
  };
}

/** Whether two id lists are equal. */
export function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** See the module comment. */
export class ChainCache {
  private readonly entries = new Map<string, CachedChain>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** Memory held now, bytes. */
  get size(): number {
    return this.bytes;
  }

  /** The chain ending with response `id`, if cached (it becomes the most recently used). */
  get(id: string): CachedChain | undefined {
    const chain = this.entries.get(id);
    if (chain) {
      this.entries.delete(id);
      this.entries.set(id, chain);
    }
    return chain;
  }

  set(id: string, chain: CachedChain): void {
    this.delete(id);
    if (chain.bytes > this.maxBytes) return;
    this.entries.set(id, chain);
    this.bytes += chain.bytes;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= old.bytes;
    }
  }

  delete(id: string): void {
    const chain = this.entries.get(id);
    if (!chain) return;
    this.entries.delete(id);
    this.bytes -= chain.bytes;
  }
}
