/**
 * The contract of a response store. A response's items (its input and its output) are stored once;
 * a response row holds its chain as an ordered list of item ids (the whole history up to and
 * including its own output), so rehydrating any chain is one lookup plus one bulk read of items.
 * Deleting a response deletes the items it introduced, so later chains rehydrate without them.
 * Every call is scoped to a tenant: another tenant's response reads as absent.
 */
import type { ResponseObject, ResponseItem } from "../api/responses.ts";

/** One stored item: its id and the item as sent or produced. */
export interface StoredItem {
  id: string;
  item: ResponseItem;
}

/** A stored response: the object returned to clients plus what chaining and routing need. */
export interface StoredResponse {
  /** The response as `GET /v1/responses/{id}` returns it (`store: true`). */
  response: ResponseObject;
  /** Tenant that created it (`""` when no tenant map is configured). */
  tenant: string;
  /** Ids of the items this response introduced as input, in order (`GET …/input_items`). */
  inputItemIds: string[];
  /** Ids of the whole chain in order: previous chain, this input, this output. */
  chainItemIds: string[];
  /** The endpoint that served it (where the chain's KV cache is), when known. */
  endpointKey?: string;
  /** Unix ms after which the response expires (retention). */
  expiresAtMs: number;
}

/** A response store (SQLite embedded by default, PostgreSQL shared). Methods reject only on I/O failure. */
export interface ResponseStore {
  /** The response `id` of `tenant`, unless absent, deleted, expired or another tenant's. */
  get(id: string, tenant: string): Promise<StoredResponse | undefined>;
  /** Items by id, in the order asked (ids that no longer exist are skipped). */
  items(ids: readonly string[]): Promise<StoredItem[]>;
  /** How many of `ids` name stored items (an index-only read: validates a cached chain). */
  countItems(ids: readonly string[]): Promise<number>;
  /** Stores a response and the items it introduced (input and output), atomically. */
  put(response: StoredResponse, newItems: readonly StoredItem[]): Promise<void>;
  /** Deletes response `id` of `tenant` and the items it introduced; false when there was none. */
  delete(id: string, tenant: string): Promise<boolean>;
  /** Deletes expired responses (and their items); returns how many. */
  sweep(nowMs: number): Promise<number>;
  close(): Promise<void>;
}

/** Limits every store enforces. */
export interface StoreLimits {
  /** Retention: a response expires this long after it was created, ms (default 30 days). */
  ttlMs: number;
  /** Items a chain may hold; a turn that would exceed it is refused (default 10,000). */
  maxChainItems: number;
}

/** Defaults of {@link StoreLimits}. */
export const DEFAULT_STORE_LIMITS: StoreLimits = { ttlMs: 30 * 24 * 3600 * 1000, maxChainItems: 10_000 };
