/**
 * The rules every {@link ResponseStore} implementation applies the same way before it writes: the
 * limits with their defaults, the chain-length refusal and the expiry a stored row gets.
 */
import { badRequest, type LlmdError } from "../api/errors.ts";
import { DEFAULT_STORE_LIMITS, type StoredResponse, type StoreLimits } from "./store.ts";

/** The limits of a store: the given ones over the defaults; throws on a value that cannot work. */
export function storeLimits(limits: Partial<StoreLimits> = {}): StoreLimits {
  const resolved = { ...DEFAULT_STORE_LIMITS, ...limits };
  if (!(resolved.ttlMs > 0)) throw new RangeError(`ttlMs must be > 0 (got ${resolved.ttlMs})`);
  if (!Number.isInteger(resolved.maxChainItems) || resolved.maxChainItems < 1)
    throw new RangeError(`maxChainItems must be an integer >= 1 (got ${resolved.maxChainItems})`);
  return resolved;
}

/**
 * The refusal of a turn whose chain holds more than `maxChainItems` items, or undefined when it fits.
 * It is a 400 naming `previous_response_id`: the client can only start a shorter chain.
 */
export function chainTooLong(response: StoredResponse, limits: StoreLimits): LlmdError | undefined {
  const n = response.chainItemIds.length;
  if (n <= limits.maxChainItems) return undefined;
  return badRequest(
    `The conversation holds ${n} items, more than the ${limits.maxChainItems} a stored chain may hold; start a new one without previous_response_id.`,
    "previous_response_id",
  );
}

/** When a stored row was created, Unix ms: the response's `created_at` (seconds). */
export const createdAtMs = (response: StoredResponse): number =>
  Math.round(response.response.created_at * 1000);

/**
 * When a stored row expires, Unix ms: the caller's `expiresAtMs`, but never later than the store's
 * retention (`created + ttlMs`), so a store's ttl bounds every row whatever the caller asked; whole
 * milliseconds, as both stores keep integers.
 */
export function expiresAtMs(response: StoredResponse, limits: StoreLimits): number {
  return Math.floor(Math.min(response.expiresAtMs, createdAtMs(response) + limits.ttlMs));
}
